package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/** A Glue table as the shim needs it, decoded once from the backend's get_table answer. */
final class TableInfo {
    final Identifier ident;
    final StructType dataSchema;
    final StructType partitionSchema;
    final String location;
    /** Spark's file source for the table (parquet, orc, csv, json), or null when Spark cannot read it. */
    final String format;
    /** Why the table cannot be read, naming its SerDe; null when it can. */
    final String unreadable;
    final Map<String, String> readOptions;
    final Map<String, String> properties;
    /** The time the table is read as of (time travel), ISO 8601; null for the current state. */
    final String asOf;
    /** Whether the table is governed: its data is the object set committed transactions registered. */
    final boolean governed;
    /** The committed transaction a governed table is read at (VERSION AS OF); null for the current state. */
    final String transaction;
    /** The warehouse's version when a governed table was loaded (a write's transaction starts there); else null. */
    final Long loadedVersion;
    /** ANALYZE's statistics as kept in Glue, for Spark's planner and DESCRIBE; null when there are none. */
    final org.apache.spark.sql.connector.read.Statistics statistics;

    TableInfo(Identifier ident, JsonNode t) {
        this.ident = ident;
        this.dataSchema = schema(t.get("columns"), ident);
        this.partitionSchema = schema(t.get("partition_keys"), ident);
        this.location = text(t, "location");
        this.format = text(t, "format");
        this.unreadable = text(t, "unreadable");
        this.readOptions = strings(t.get("options"));
        this.properties = strings(t.get("properties"));
        this.asOf = text(t, "as_of");
        this.governed = t.path("governed").asBoolean(false);
        this.transaction = text(t, "transaction");
        JsonNode loaded = t.get("loaded_version");
        this.loadedVersion = loaded == null || loaded.isNull() ? null : loaded.asLong();
        this.statistics = statistics(t.get("statistics"), schema());
    }

    /** Glue's order, as Spark's built-in catalog, EMR and Athena present a table: its columns, then its partition
     * keys (so a positional INSERT fills the same columns as there). */
    StructType schema() {
        StructType all = dataSchema;
        for (StructField f : partitionSchema.fields()) {
            all = all.add(f);
        }
        return all;
    }

    List<String> partitionNames() {
        List<String> out = new ArrayList<>();
        for (StructField f : partitionSchema.fields()) {
            out.add(f.name());
        }
        return out;
    }

    /** Spark's partitioning of the table: identity transforms of its partition columns, in order. */
    Transform[] partitioning() {
        List<Transform> out = new ArrayList<>();
        for (String name : partitionNames()) {
            out.add(Expressions.identity(name));
        }
        return out.toArray(new Transform[0]);
    }

    private static java.util.OptionalLong optionalLong(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v == null || v.isNull() ? java.util.OptionalLong.empty() : java.util.OptionalLong.of(v.asLong());
    }

    /** Glue's statistics as Spark's: min and max from Spark's external form to its internal values. */
    private static org.apache.spark.sql.connector.read.Statistics statistics(JsonNode s, StructType schema) {
        if (s == null || s.isNull()) {
            return null;
        }
        java.util.OptionalLong size = optionalLong(s, "size");
        java.util.OptionalLong rows = optionalLong(s, "rows");
        Map<org.apache.spark.sql.connector.expressions.NamedReference,
            org.apache.spark.sql.connector.read.colstats.ColumnStatistics> columns = new HashMap<>();
        s.path("columns").fields().forEachRemaining(e -> {
            if (schema.getFieldIndex(e.getKey()).isEmpty()) {
                return;
            }
            DataType type = schema.apply(e.getKey()).dataType();
            JsonNode c = e.getValue();
            java.util.Optional<Object> min = external(c, "min", e.getKey(), type);
            java.util.Optional<Object> max = external(c, "max", e.getKey(), type);
            columns.put(org.apache.spark.sql.connector.expressions.Expressions.column(e.getKey()),
                new org.apache.spark.sql.connector.read.colstats.ColumnStatistics() {
                    @Override
                    public java.util.OptionalLong distinctCount() {
                        return optionalLong(c, "distinct_count");
                    }

                    @Override
                    public java.util.Optional<Object> min() {
                        return min;
                    }

                    @Override
                    public java.util.Optional<Object> max() {
                        return max;
                    }

                    @Override
                    public java.util.OptionalLong nullCount() {
                        return optionalLong(c, "null_count");
                    }

                    @Override
                    public java.util.OptionalLong avgLen() {
                        return optionalLong(c, "avg_len");
                    }

                    @Override
                    public java.util.OptionalLong maxLen() {
                        return optionalLong(c, "max_len");
                    }
                });
        });
        return new org.apache.spark.sql.connector.read.Statistics() {
            @Override
            public java.util.OptionalLong sizeInBytes() {
                return size;
            }

            @Override
            public java.util.OptionalLong numRows() {
                return rows;
            }

            @Override
            public Map<org.apache.spark.sql.connector.expressions.NamedReference,
                    org.apache.spark.sql.connector.read.colstats.ColumnStatistics> columnStats() {
                return columns;
            }
        };
    }

    private static java.util.Optional<Object> external(JsonNode c, String field, String column, DataType type) {
        JsonNode v = c.get(field);
        if (v == null || v.isNull()) {
            return java.util.Optional.empty();
        }
        try {
            return java.util.Optional.ofNullable(org.apache.spark.sql.catalyst.catalog.CatalogColumnStat$.MODULE$
                .fromExternalString(v.asText(), column, type, 2));
        } catch (RuntimeException e) {
            return java.util.Optional.empty();  // a value Spark cannot read back only loses that bound
        }
    }

    private static String text(JsonNode t, String field) {
        JsonNode v = t.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    static Map<String, String> strings(JsonNode node) {
        Map<String, String> out = new HashMap<>();
        if (node != null) {
            node.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
        }
        return out;
    }

    /** Column types by their text: every statement loads its tables afresh, and parsing a type with Spark's
     * SQL parser cost more than the rest of a load's decoding (types are immutable, and few per warehouse). */
    private static final ConcurrentHashMap<String, DataType> TYPES = new ConcurrentHashMap<>();

    /** A column's DEFAULT (its SQL, and the value rows written before the column existed read as) as the field
     * metadata Spark's analyser and file readers look for. */
    private static Metadata defaults(JsonNode c) {
        JsonNode current = c.get("current_default");
        JsonNode exists = c.get("exists_default");
        if ((current == null || current.isNull()) && (exists == null || exists.isNull())) {
            return Metadata.empty();
        }
        org.apache.spark.sql.types.MetadataBuilder out = new org.apache.spark.sql.types.MetadataBuilder();
        if (current != null && !current.isNull()) {
            out.putString(CURRENT_DEFAULT, current.asText());
        }
        if (exists != null && !exists.isNull()) {
            out.putString(EXISTS_DEFAULT, exists.asText());
        }
        return out.build();
    }

    /** Spark's field metadata keys of a column's DEFAULT (ResolveDefaultColumns). */
    static final String CURRENT_DEFAULT = "CURRENT_DEFAULT";
    static final String EXISTS_DEFAULT = "EXISTS_DEFAULT";

    static StructType schema(JsonNode columns, Identifier ident) {
        List<StructField> fields = new ArrayList<>();
        for (JsonNode c : columns) {
            String name = c.get("name").asText();
            String type = c.get("type").asText();
            DataType dataType;
            try {
                dataType = TYPES.computeIfAbsent(type, DataType::fromDDL);
            } catch (RuntimeException e) {
                throw new IllegalArgumentException(
                    "gluecat: column " + name + " of " + ident + " has type '" + type + "', which Spark cannot read", e);
            }
            StructField field = new StructField(name, dataType, true, defaults(c));
            String comment = c.path("comment").asText("");
            fields.add(comment.isEmpty() ? field : field.withComment(comment));
        }
        return new StructType(fields.toArray(new StructField[0]));
    }
}
