package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.read.LocalScan;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * {@code CALL glue.system.<name>(...)}: Glue's partition index calls and the maintenance Spark's v2 syntax does not
 * bring to a catalog (MSCK REPAIR TABLE, ANALYZE TABLE, PARTITION ... SET LOCATION, which the session extension
 * turns into these calls). Each takes {@code table => 'db.table'}; the backend operation of the same name answers
 * the rows, except analyze_table, whose statistics Spark computes here first.
 */
final class Procedures {
    private record Param(String name, DataType type, String defaultValue) {}

    private record Spec(String description, List<Param> params, StructType rows) {}

    private static final StructType INDEX_ROWS = new StructType()
        .add("index_name", DataTypes.StringType)
        .add("keys", DataTypes.StringType)
        .add("status", DataTypes.StringType)
        .add("backfill_errors", DataTypes.StringType);

    private static final StructType STATUS_ROWS = new StructType()
        .add("index_name", DataTypes.StringType)
        .add("status", DataTypes.StringType);

    private static final Param TABLE = new Param("table", DataTypes.StringType, null);

    private static final Map<String, Spec> SPECS = new LinkedHashMap<>();

    static {
        SPECS.put("create_partition_index", new Spec(
            "Creates a Glue partition index on keys (comma-separated partition columns) of table",
            List.of(TABLE, new Param("index_name", DataTypes.StringType, null),
                new Param("keys", DataTypes.StringType, null)),
            STATUS_ROWS));
        SPECS.put("drop_partition_index", new Spec("Deletes a Glue partition index of table",
            List.of(TABLE, new Param("index_name", DataTypes.StringType, null)), STATUS_ROWS));
        SPECS.put("partition_indexes", new Spec(
            "Lists the partition indexes of table with their keys, status and backfill errors", List.of(TABLE),
            INDEX_ROWS));
        SPECS.put("repair_table", new Spec(
            "Registers the partitions found in table's folder layout (k=v/...) that the catalog lacks (add), and drops"
                + " the registered ones whose folder is gone (drop); answers what it added and dropped",
            List.of(TABLE, new Param("add", DataTypes.BooleanType, "true"),
                new Param("drop", DataTypes.BooleanType, "false")),
            new StructType().add("action", DataTypes.StringType).add("partition", DataTypes.StringType)));
        SPECS.put("set_partition_location", new Spec(
            "Points a partition (a JSON object of its values, or its Hive name k=v/...) of table at location",
            List.of(TABLE, new Param("partition", DataTypes.StringType, null),
                new Param("location", DataTypes.StringType, null)),
            new StructType().add("partition", DataTypes.StringType).add("location", DataTypes.StringType)));
        SPECS.put("analyze_table", new Spec(
            "Computes table statistics (numRows, totalSize) and, for columns (comma-separated) or all_columns, column"
                + " statistics, and stores them in Glue (table parameters, column statistics); noscan: size only",
            List.of(TABLE, new Param("noscan", DataTypes.BooleanType, "false"),
                new Param("columns", DataTypes.StringType, ""),
                new Param("all_columns", DataTypes.BooleanType, "false")),
            new StructType().add("statistic", DataTypes.StringType).add("value", DataTypes.StringType)));
    }

    static final List<String> NAMES = List.copyOf(SPECS.keySet());

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

    static UnboundProcedure load(GlueCatalog catalog, Backend backend, Identifier ident) {
        if (!isSystem(ident.namespace()) || !SPECS.containsKey(ident.name())) {
            return null;
        }
        return new Proc(catalog, backend, ident.name(), SPECS.get(ident.name()));
    }

    private static final class Proc implements UnboundProcedure, BoundProcedure {
        private final GlueCatalog catalog;
        private final Backend backend;
        private final String name;
        private final Spec spec;

        Proc(GlueCatalog catalog, Backend backend, String name, Spec spec) {
            this.catalog = catalog;
            this.backend = backend;
            this.name = name;
            this.spec = spec;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public String description() {
            return spec.description();
        }

        @Override
        public BoundProcedure bind(StructType inputType) {
            return this;
        }

        @Override
        public ProcedureParameter[] parameters() {
            List<ProcedureParameter> out = new ArrayList<>();
            for (Param p : spec.params()) {
                ProcedureParameter.Builder b = ProcedureParameter.in(p.name(), p.type());
                if (p.defaultValue() != null) {
                    b = b.defaultValue(p.type().equals(DataTypes.StringType) ? "'" + p.defaultValue() + "'"
                        : p.defaultValue());
                }
                out.add(b.build());
            }
            return out.toArray(new ProcedureParameter[0]);
        }

        @Override
        public boolean isDeterministic() {
            return false;
        }

        @Override
        public Iterator<Scan> call(InternalRow input) {
            ObjectNode args = Backend.args();
            List<Param> params = spec.params();
            for (int i = 0; i < params.size(); i++) {
                Param p = params.get(i);
                if (input.isNullAt(i)) {
                    args.putNull(p.name());
                } else if (p.type().equals(DataTypes.BooleanType)) {
                    args.put(p.name(), input.getBoolean(i));
                } else {
                    args.put(p.name(), input.getUTF8String(i).toString());
                }
            }
            JsonNode rows;
            try {
                if (name.equals("analyze_table")) {
                    Statistics.compute(catalog, args);
                }
                rows = backend.call(name, args);
            } catch (Backend.GlueError e) {
                throw e.toSpark();
            }
            StructType schema = spec.rows();
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
