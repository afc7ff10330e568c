package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * CALL glue.system.create_partition_index / drop_partition_index / partition_indexes: Glue's partition index
 * calls as Spark 4 procedures. Each takes {@code table => 'db.table'}; the answer rows come from the backend.
 */
final class Procedures {
    static final List<String> NAMES = List.of("create_partition_index", "drop_partition_index", "partition_indexes");

    private static final StructType INDEX_ROWS = new StructType()
        .add("index_name", DataTypes.StringType)
        .add("keys", DataTypes.StringType)
        .add("status", DataTypes.StringType)
        .add("backfill_errors", DataTypes.StringType);

    private static final StructType STATUS_ROWS = new StructType()
        .add("index_name", DataTypes.StringType)
        .add("status", DataTypes.StringType);

    private Procedures() {}

    static boolean isSystem(String[] namespace) {
        return namespace.length == 1 && namespace[0].equals("system");
    }

    static Identifier[] list(String[] namespace) {
        if (!isSystem(namespace)) {
            return new Identifier[0];
        }
        return NAMES.stream().map(n -> Identifier.of(namespace, n)).toArray(Identifier[]::new);
    }

    static UnboundProcedure load(Backend backend, Identifier ident) {
        if (!isSystem(ident.namespace()) || !NAMES.contains(ident.name())) {
            return null;
        }
        return new Proc(backend, ident.name());
    }

    private static final class Proc implements UnboundProcedure, BoundProcedure {
        private final Backend backend;
        private final String name;

        Proc(Backend backend, String name) {
            this.backend = backend;
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String description() {
            switch (name) {
                case "create_partition_index":
                    return "Creates a Glue partition index on keys (comma-separated partition columns) of table";
                case "drop_partition_index":
                    return "Deletes a Glue partition index of table";
                default:
                    return "Lists the partition indexes of table with their keys, status and backfill errors";
            }
        }

        @Override
        public BoundProcedure bind(StructType inputType) {
            return this;
        }

        @Override
        public ProcedureParameter[] parameters() {
            List<ProcedureParameter> out = new ArrayList<>();
            out.add(ProcedureParameter.in("table", DataTypes.StringType).build());
            if (!name.equals("partition_indexes")) {
                out.add(ProcedureParameter.in("index_name", DataTypes.StringType).build());
            }
            if (name.equals("create_partition_index")) {
                out.add(ProcedureParameter.in("keys", DataTypes.StringType).build());
            }
            return out.toArray(new ProcedureParameter[0]);
        }

        @Override
        public boolean isDeterministic() {
            return false;
        }

        @Override
        public Iterator<Scan> call(InternalRow input) {
            String table = input.getUTF8String(0).toString();
            ObjectNode args = Backend.args().put("table", table);
            if (!name.equals("partition_indexes")) {
                args.put("index_name", input.getUTF8String(1).toString());
            }
            if (name.equals("create_partition_index")) {
                args.put("keys", input.getUTF8String(2).toString());
            }
            JsonNode rows;
            try {
                rows = backend.call(name, args);
            } catch (Backend.GlueError e) {
                throw e.toSpark();
            }
            StructType schema = name.equals("partition_indexes") ? INDEX_ROWS : STATUS_ROWS;
            List<InternalRow> out = new ArrayList<>();
            for (JsonNode r : rows) {
                Object[] values = new Object[schema.size()];
                for (int i = 0; i < values.length; i++) {
                    JsonNode v = r.get(schema.fields()[i].name());
                    values[i] = v == null || v.isNull() ? null : UTF8String.fromString(v.asText());
                }
                out.add(new GenericInternalRow(values));
            }
            InternalRow[] result = out.toArray(new InternalRow[0]);
            Scan scan = new LocalScan() {
                @Override
                public InternalRow[] rows() {
                    return result;
                }

                @Override
                public StructType readSchema() {
                    return schema;
                }
            };
            return List.of(scan).iterator();
        }
    }
}
