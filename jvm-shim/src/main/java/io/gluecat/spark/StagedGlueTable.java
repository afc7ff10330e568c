package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gluecat.spark.internal.GlueWrite;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * The table a CTAS or REPLACE TABLE [AS SELECT] makes, before it is made: its rows are written to a staging
 * folder, and only {@link #commitStagedChanges} (after the write succeeded) replaces the old table and moves
 * them in. Without it, Spark drops the old table (deleting a managed table's data) before the query runs, so
 * a query that failed lost the table.
 */
final class StagedGlueTable implements StagedTable, SupportsWrite {
    private final GlueCatalog catalog;
    private final Backend backend;
    private final TableInfo info;
    /** The create_table arguments and the stage (create, replace, create_or_replace). */
    private final ObjectNode definition;
    private final String staging;
    private final JsonNode replaces;
    private String mode = GlueWrite.Mode.APPEND.name();
    private ArrayNode written;
    /** The columns in the order the statement declared them: Spark writes its query into the staged table by
     * position, so this one reads in the query's order (the table made, like Spark's own, reads in Glue's). */
    private final StructType declared;

    StagedGlueTable(GlueCatalog catalog, Backend backend, TableInfo info, ObjectNode definition, JsonNode answer,
            StructType declared) {
        this.catalog = catalog;
        this.backend = backend;
        this.info = info;
        this.declared = declared;
        this.definition = definition;
        this.staging = answer.get("staging").asText();
        this.replaces = answer.get("replaces");
    }

    @Override
    public String name() {
        return catalog.name() + "." + info.ident;
    }

    @Override
    public StructType schema() {
        return declared;
    }

    @Override
    public Transform[] partitioning() {
        return info.partitioning();
    }

    @Override
    public Map<String, String> properties() {
        return info.properties;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.OVERWRITE_BY_FILTER,
            TableCapability.OVERWRITE_DYNAMIC, TableCapability.TRUNCATE);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo write) {
        return GlueTable.writeBuilder(info, write, new Target());
    }

    /** The write's files stay in the staging folder; what it wrote is kept for the commit. */
    private final class Target implements GlueWrite.Target {
        @Override
        public String begin() {
            return staging;
        }

        @Override
        public void commit(String folder, GlueWrite.Mode how, Filter[] filters, List<String> fragments,
                List<List<String>> values) {
            ArrayNode w = Backend.JSON.createArrayNode();
            for (int i = 0; i < fragments.size(); i++) {
                ObjectNode one = w.addObject().put("fragment", fragments.get(i));
                one.set("values", Partitions.json(values.get(i)));
            }
            mode = how.name();
            written = w;
        }

        @Override
        public void abort(String folder) {
            abortStagedChanges();
        }
    }

    @Override
    public void commitStagedChanges() {
        ObjectNode a = definition.deepCopy().put("staging", staging).put("mode", mode);
        a.set("written", written != null ? written : Backend.JSON.createArrayNode());
        a.set("replaces", replaces);
        try {
            backend.call("commit_staged", a);
        } catch (Backend.GlueError e) {
            throw e.toSpark("identifier", catalog.quoted(info.ident));
        }
    }

    @Override
    public void abortStagedChanges() {
        backend.call("abort_staged", Backend.table(info.ident.namespace()[0], info.ident.name())
            .put("staging", staging));
    }

    /**
     * A governed table's CTAS or REPLACE TABLE: made at once, as Spark makes a table for a catalog that stages
     * nothing (its rows are objects, which the write's own transaction commits), and dropped if the write fails.
     */
    static final class Immediate implements StagedTable, SupportsWrite {
        private final GlueCatalog catalog;
        private final Table table;
        private final StructType declared;

        Immediate(GlueCatalog catalog, Table table, StructType declared) {
            this.catalog = catalog;
            this.table = table;
            this.declared = declared;
        }

        @Override
        public String name() {
            return table.name();
        }

        @Override
        public StructType schema() {
            return declared;  // the query's order, as above
        }

        @Override
        public Transform[] partitioning() {
            return table.partitioning();
        }

        @Override
        public Map<String, String> properties() {
            return table.properties();
        }

        @Override
        public Set<TableCapability> capabilities() {
            return table.capabilities();
        }

        @Override
        public WriteBuilder newWriteBuilder(LogicalWriteInfo write) {
            return ((SupportsWrite) table).newWriteBuilder(write);
        }

        @Override
        public void commitStagedChanges() {}

        @Override
        public void abortStagedChanges() {
            catalog.dropTable(((GlueTable) table).info().ident);
        }
    }
}
