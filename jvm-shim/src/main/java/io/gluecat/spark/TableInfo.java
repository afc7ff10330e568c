package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.spark.sql.connector.catalog.Identifier;
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
    /** Spark's column order when it is not the columns followed by the partition keys; else null. */
    final List<String> order;
    /** The time the table is read as of (time travel), ISO 8601; null for the current state. */
    final String asOf;

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
        JsonNode o = t.get("order");
        if (o == null || o.isNull()) {
            this.order = null;
        } else {
            this.order = new ArrayList<>();
            o.forEach(n -> order.add(n.asText()));
        }
    }

    StructType schema() {
        StructType all = dataSchema;
        for (StructField f : partitionSchema.fields()) {
            all = all.add(f);
        }
        if (order == null) {
            return all;
        }
        List<StructField> ordered = new ArrayList<>();
        for (String name : order) {
            if (all.getFieldIndex(name).isDefined()) {
                ordered.add(all.apply(name));
            }
        }
        for (StructField f : all.fields()) {
            if (!order.contains(f.name())) {
                ordered.add(f);
            }
        }
        return new StructType(ordered.toArray(new StructField[0]));
    }

    List<String> partitionNames() {
        List<String> out = new ArrayList<>();
        for (StructField f : partitionSchema.fields()) {
            out.add(f.name());
        }
        return out;
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

    private static StructType schema(JsonNode columns, Identifier ident) {
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
            StructField field = new StructField(name, dataType, true, Metadata.empty());
            String comment = c.path("comment").asText("");
            fields.add(comment.isEmpty() ? field : field.withComment(comment));
        }
        return new StructType(fields.toArray(new StructField[0]));
    }
}
