package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringContains;
import org.apache.spark.sql.sources.StringEndsWith;
import org.apache.spark.sql.sources.StringStartsWith;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/** Partition values between Glue (strings, Hive's null marker) and Spark (typed rows), and filters as JSON. */
final class Partitions {
    /** How Hive and Glue write a null partition value. */
    static final String NULL_VALUE = "__HIVE_DEFAULT_PARTITION__";

    private Partitions() {}

    private static scala.Option<String> zone() {
        return scala.Option.apply(SQLConf.get().sessionLocalTimeZone());
    }

    /** A partition's Glue values as a Catalyst row typed by the partition schema. */
    static InternalRow row(StructType schema, List<String> values) {
        Object[] out = new Object[values.size()];
        for (int i = 0; i < out.length; i++) {
            String v = values.get(i);
            DataType type = schema.fields()[i].dataType();
            if (v == null || v.equals(NULL_VALUE)) {
                out[i] = null;
            } else if (type.equals(DataTypes.StringType)) {
                out[i] = UTF8String.fromString(v);
            } else if (type.equals(DataTypes.IntegerType) && isInteger(v, 9)) {
                out[i] = Integer.parseInt(v);
            } else if (type.equals(DataTypes.LongType) && isInteger(v, 18)) {
                out[i] = Long.parseLong(v);
            } else {
                Object cast = new Cast(Literal.create(v, DataTypes.StringType), type, zone()).eval(null);
                if (cast == null) {
                    throw new IllegalArgumentException("gluecat: partition value '" + v + "' of "
                        + schema.fields()[i].name() + " is not a valid " + type.simpleString());
                }
                out[i] = cast;
            }
        }
        return new GenericInternalRow(out);
    }

    /** Plain decimal digits with an optional sign and no leading zeros, so that parsing loses nothing. */
    private static boolean isInteger(String v, int maxDigits) {
        int start = v.startsWith("-") ? 1 : 0;
        if (v.length() == start || v.length() - start > maxDigits || (v.charAt(start) == '0' && v.length() > start + 1)) {
            return false;
        }
        for (int i = start; i < v.length(); i++) {
            if (v.charAt(i) < '0' || v.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** A Catalyst partition row as Glue's string values. */
    static List<String> values(StructType schema, InternalRow row) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < schema.fields().length; i++) {
            DataType type = schema.fields()[i].dataType();
            if (row.isNullAt(i)) {
                out.add(NULL_VALUE);
            } else if (type.equals(DataTypes.StringType)) {
                out.add(row.getUTF8String(i).toString());
            } else if (type.equals(DataTypes.IntegerType)) {
                out.add(Integer.toString(row.getInt(i)));
            } else if (type.equals(DataTypes.LongType)) {
                out.add(Long.toString(row.getLong(i)));
            } else if (type.equals(DataTypes.DateType)) {
                out.add(java.time.LocalDate.ofEpochDay(row.getInt(i)).toString());
            } else {
                Object v = row.get(i, type);
                Object s = new Cast(Literal.create(v, type), DataTypes.StringType, zone()).eval(null);
                out.add(s.toString());
            }
        }
        return out;
    }

    static ArrayNode json(List<String> values) {
        ArrayNode out = Backend.JSON.createArrayNode();
        values.forEach(out::add);
        return out;
    }

    /** The rows of a list_partitions answer: {"values": [[column of key 0], ...], "locations": [...]}. */
    static List<InternalRow> rows(StructType schema, JsonNode answer) {
        JsonNode columns = answer.get("values");
        int n = answer.get("locations").size();
        List<InternalRow> out = new ArrayList<>(n);
        for (int r = 0; r < n; r++) {
            List<String> values = new ArrayList<>();
            for (JsonNode column : columns) {
                values.add(column.get(r).asText());
            }
            out.add(row(schema, values));
        }
        return out;
    }

    /** Spark's source filters as the JSON trees gluecat.expressions.spark reads. */
    static ArrayNode filters(Filter[] filters) {
        ArrayNode out = Backend.JSON.createArrayNode();
        for (Filter f : filters) {
            try {
                out.add(filter(f));
            } catch (UnsupportedOperationException e) {
                // Top-level filters are ANDed, so leaving one out only narrows less; Spark still applies it.
            }
        }
        return out;
    }

    static ObjectNode filter(Filter f) {
        ObjectNode node = Backend.JSON.createObjectNode();
        if (f instanceof And || f instanceof Or) {
            // A chain of one operator (a DataFrame's reduce(or) makes one thousands deep) goes flat, so
            // that its JSON nests no deeper than its alternations of AND and OR.
            boolean and = f instanceof And;
            ArrayNode children = node.put("op", and ? "And" : "Or").putArray("children");
            java.util.ArrayDeque<Filter> pending = new java.util.ArrayDeque<>();
            pending.push(f);
            while (!pending.isEmpty()) {
                Filter g = pending.pop();
                if (and && g instanceof And a) {
                    pending.push(a.right());
                    pending.push(a.left());
                } else if (!and && g instanceof Or o) {
                    pending.push(o.right());
                    pending.push(o.left());
                } else {
                    children.add(filter(g));
                }
            }
        } else if (f instanceof Not n) {
            node.put("op", "Not").set("child", filter(n.child()));
        } else if (f instanceof EqualTo e) {
            leaf(node, "EqualTo", e.attribute(), e.value());
        } else if (f instanceof EqualNullSafe e) {
            if (e.value() == null) {
                throw new UnsupportedOperationException("null partition values are Hive's marker, not null");
            }
            leaf(node, "EqualNullSafe", e.attribute(), e.value());
        } else if (f instanceof GreaterThan e) {
            leaf(node, "GreaterThan", e.attribute(), e.value());
        } else if (f instanceof GreaterThanOrEqual e) {
            leaf(node, "GreaterThanOrEqual", e.attribute(), e.value());
        } else if (f instanceof LessThan e) {
            leaf(node, "LessThan", e.attribute(), e.value());
        } else if (f instanceof LessThanOrEqual e) {
            leaf(node, "LessThanOrEqual", e.attribute(), e.value());
        } else if (f instanceof In in) {
            node.put("op", "In").put("attribute", in.attribute());
            ArrayNode values = node.putArray("values");
            for (Object v : in.values()) {
                values.add(value(v));
            }
        } else if (f instanceof IsNull || f instanceof IsNotNull) {
            // The catalog stores a null partition value as Hive's __HIVE_DEFAULT_PARTITION__ string, so
            // null tests are left to Spark, which sees that marker as null in the partition rows.
            throw new UnsupportedOperationException("null tests are evaluated by Spark");
        } else if (f instanceof StringStartsWith e) {
            leaf(node, "StringStartsWith", e.attribute(), e.value());
        } else if (f instanceof StringEndsWith e) {
            leaf(node, "StringEndsWith", e.attribute(), e.value());
        } else if (f instanceof StringContains e) {
            leaf(node, "StringContains", e.attribute(), e.value());
        } else if (f instanceof org.apache.spark.sql.sources.AlwaysTrue) {
            node.put("op", "AlwaysTrue");
        } else if (f instanceof org.apache.spark.sql.sources.AlwaysFalse) {
            node.put("op", "AlwaysFalse");
        } else {
            throw new UnsupportedOperationException(f.toString());
        }
        return node;
    }

    /**
     * Spark's source filters, ANDed, as one Catalyst predicate over a partition's typed values (a row of
     * the partition schema), evaluated with Spark's own semantics: nulls, double and boolean keys, a
     * timestamp in the session's time zone. The catalog's selection for a read may hold more partitions
     * than the filters match (Spark filters them again); an overwrite must replace exactly those matched.
     */
    static org.apache.spark.sql.catalyst.expressions.Expression predicate(StructType schema, Filter[] filters) {
        org.apache.spark.sql.catalyst.expressions.Expression all = Literal.create(true, DataTypes.BooleanType);
        for (Filter f : filters) {
            all = new org.apache.spark.sql.catalyst.expressions.And(all, catalyst(schema, f));
        }
        return all;
    }

    private static org.apache.spark.sql.catalyst.expressions.Expression catalyst(StructType schema, Filter f) {
        if (f instanceof And a) {
            return new org.apache.spark.sql.catalyst.expressions.And(catalyst(schema, a.left()), catalyst(schema, a.right()));
        }
        if (f instanceof Or o) {
            return new org.apache.spark.sql.catalyst.expressions.Or(catalyst(schema, o.left()), catalyst(schema, o.right()));
        }
        if (f instanceof Not n) {
            return new org.apache.spark.sql.catalyst.expressions.Not(catalyst(schema, n.child()));
        }
        if (f instanceof org.apache.spark.sql.sources.AlwaysTrue) {
            return Literal.create(true, DataTypes.BooleanType);
        }
        if (f instanceof org.apache.spark.sql.sources.AlwaysFalse) {
            return Literal.create(false, DataTypes.BooleanType);
        }
        if (f instanceof EqualTo e) {
            return new org.apache.spark.sql.catalyst.expressions.EqualTo(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        if (f instanceof EqualNullSafe e) {
            return new org.apache.spark.sql.catalyst.expressions.EqualNullSafe(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        if (f instanceof GreaterThan e) {
            return new org.apache.spark.sql.catalyst.expressions.GreaterThan(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        if (f instanceof GreaterThanOrEqual e) {
            return new org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        if (f instanceof LessThan e) {
            return new org.apache.spark.sql.catalyst.expressions.LessThan(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        if (f instanceof LessThanOrEqual e) {
            return new org.apache.spark.sql.catalyst.expressions.LessThanOrEqual(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        if (f instanceof In in) {
            List<org.apache.spark.sql.catalyst.expressions.Expression> values = new ArrayList<>();
            for (Object v : in.values()) {
                values.add(constant(schema, in.attribute(), v));
            }
            return new org.apache.spark.sql.catalyst.expressions.In(column(schema, in.attribute()),
                io.gluecat.spark.internal.Scala.seq(values));
        }
        if (f instanceof IsNull e) {
            return new org.apache.spark.sql.catalyst.expressions.IsNull(column(schema, e.attribute()));
        }
        if (f instanceof IsNotNull e) {
            return new org.apache.spark.sql.catalyst.expressions.IsNotNull(column(schema, e.attribute()));
        }
        if (f instanceof StringStartsWith e) {
            return new org.apache.spark.sql.catalyst.expressions.StartsWith(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        if (f instanceof StringEndsWith e) {
            return new org.apache.spark.sql.catalyst.expressions.EndsWith(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        if (f instanceof StringContains e) {
            return new org.apache.spark.sql.catalyst.expressions.Contains(column(schema, e.attribute()), constant(schema, e.attribute(), e.value()));
        }
        throw new UnsupportedOperationException("gluecat: cannot overwrite the partitions matching " + f);
    }

    private static int index(StructType schema, String attribute) {
        StructField[] fields = schema.fields();
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].name().equals(attribute)) {
                return i;
            }
        }
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].name().equalsIgnoreCase(attribute)) {
                return i;
            }
        }
        throw new UnsupportedOperationException("gluecat: " + attribute + " is not a partition column");
    }

    private static org.apache.spark.sql.catalyst.expressions.Expression column(StructType schema, String attribute) {
        int i = index(schema, attribute);
        return new org.apache.spark.sql.catalyst.expressions.BoundReference(i, schema.fields()[i].dataType(), true);
    }

    /** A filter's value as a literal of its column's type. */
    private static org.apache.spark.sql.catalyst.expressions.Expression constant(StructType schema, String attribute, Object v) {
        DataType type = schema.fields()[index(schema, attribute)].dataType();
        if (v == null) {
            return Literal.create(null, type);
        }
        Literal literal = org.apache.spark.sql.catalyst.expressions.Literal$.MODULE$.apply(v);
        return literal.dataType().equals(type) ? literal : new Cast(literal, type, zone());
    }

    private static void leaf(ObjectNode node, String op, String attribute, Object value) {
        node.put("op", op).put("attribute", attribute).set("value", value(value));
    }

    private static JsonNode value(Object v) {
        if (v == null) {
            return Backend.JSON.nullNode();
        }
        if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            return Backend.JSON.getNodeFactory().numberNode(((Number) v).longValue());
        }
        if (v instanceof BigDecimal d) {
            return Backend.JSON.getNodeFactory().textNode(d.toPlainString());
        }
        if (v instanceof scala.math.BigDecimal d) {
            return Backend.JSON.getNodeFactory().textNode(d.bigDecimal().toPlainString());
        }
        if (v instanceof Boolean b) {
            return Backend.JSON.getNodeFactory().booleanNode(b);
        }
        DataType temporal = temporalType(v);
        if (temporal != null) {
            // As values() writes a partition's value: a timestamp in the session's time zone (a
            // java.sql.Timestamp prints in the JVM's, an Instant in UTC), a date by the proleptic calendar.
            Object text = new Cast(Literal.create(v, temporal), DataTypes.StringType, zone()).eval(null);
            return Backend.JSON.getNodeFactory().textNode(text.toString());
        }
        // Strings, floating point.
        return Backend.JSON.getNodeFactory().textNode(v.toString());
    }

    /** The Catalyst type of a date or timestamp as Spark's source filters carry it; null for another value. */
    private static DataType temporalType(Object v) {
        if (v instanceof java.sql.Timestamp || v instanceof java.time.Instant) {
            return DataTypes.TimestampType;
        }
        if (v instanceof java.time.LocalDateTime) {
            return DataTypes.TimestampNTZType;
        }
        if (v instanceof java.sql.Date || v instanceof java.time.LocalDate) {
            return DataTypes.DateType;
        }
        return null;
    }
}
