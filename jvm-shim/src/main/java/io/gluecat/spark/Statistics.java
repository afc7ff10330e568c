package io.gluecat.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gluecat.spark.internal.Scala;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.catalog.CatalogColumnStat;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.plans.logical.ColumnStat;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.command.CommandUtils$;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegralType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;

/**
 * ANALYZE TABLE's scan, as Spark's own ANALYZE computes it (CommandUtils.computeColumnStats: one aggregate over the
 * table), for the backend's analyze_table to store in Glue: the row count, and each asked column's statistics with
 * min and max in Spark's external form. Boolean columns also get their true and false counts, which Glue's
 * statistics hold and Spark's do not.
 */
final class Statistics {
    private Statistics() {}

    /** The column types Spark computes statistics for. */
    static boolean supported(DataType type) {
        return type instanceof IntegralType || type instanceof DecimalType || type instanceof DoubleType
            || type instanceof FloatType || type instanceof BooleanType || type instanceof DateType
            || type instanceof TimestampType || type instanceof TimestampNTZType || type instanceof BinaryType
            || type instanceof StringType;
    }

    /** Adds {@code num_rows} and {@code column_stats} to an analyze_table call's arguments, unless NOSCAN. */
    static void compute(GlueCatalog catalog, ObjectNode args) {
        if (args.path("noscan").asBoolean(false)) {
            return;
        }
        org.apache.spark.sql.classic.SparkSession spark =
            (org.apache.spark.sql.classic.SparkSession) SparkSession.active();
        String table = args.get("table").asText();
        String name = catalog.name() + "." + table;
        Dataset<Row> df = spark.table(name);
        LogicalPlan plan = df.queryExecution().analyzed();
        List<Attribute> output = Scala.list(plan.output());
        List<Attribute> wanted = new ArrayList<>();
        String columns = args.path("columns").asText("");
        if (args.path("all_columns").asBoolean(false)) {
            output.stream().filter(a -> supported(a.dataType())).forEach(wanted::add);
        } else if (!columns.isEmpty()) {
            for (String column : columns.split(",")) {
                Attribute found = output.stream()
                    .filter(a -> a.name().toLowerCase(Locale.ROOT).equals(column.trim().toLowerCase(Locale.ROOT)))
                    .findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("gluecat: ANALYZE TABLE " + table
                        + " FOR COLUMNS: " + column.trim() + " is not a column of the table"));
                if (!supported(found.dataType())) {
                    throw new IllegalArgumentException("gluecat: ANALYZE TABLE " + table + " FOR COLUMNS: column "
                        + found.name() + " is of type " + found.dataType().simpleString()
                        + ", and Spark does not compute statistics for that type");
                }
                wanted.add(found);
            }
        }
        if (wanted.isEmpty()) {
            args.put("num_rows", df.count());
            return;
        }
        scala.Tuple2<Object, scala.collection.immutable.Map<Attribute, ColumnStat>> computed =
            CommandUtils$.MODULE$.computeColumnStats(spark, plan, Scala.seq(wanted));
        args.put("num_rows", ((Number) computed._1()).longValue());
        ObjectNode stats = args.putObject("column_stats");
        for (Map.Entry<Attribute, ColumnStat> e : Scala.javaMap(computed._2()).entrySet()) {
            Attribute attr = e.getKey();
            CatalogColumnStat c = e.getValue().toCatalogColumnStat(attr.name(), attr.dataType());
            ObjectNode o = stats.putObject(attr.name());
            o.put("type", attr.dataType().catalogString());
            if (c.distinctCount().isDefined()) {
                o.put("distinct_count", c.distinctCount().get().longValue());
            }
            if (c.nullCount().isDefined()) {
                o.put("null_count", c.nullCount().get().longValue());
            }
            if (c.min().isDefined()) {
                o.put("min", c.min().get());
            }
            if (c.max().isDefined()) {
                o.put("max", c.max().get());
            }
            if (c.avgLen().isDefined()) {
                o.put("avg_len", ((Number) c.avgLen().get()).longValue());
            }
            if (c.maxLen().isDefined()) {
                o.put("max_len", ((Number) c.maxLen().get()).longValue());
            }
            if (attr.dataType() instanceof BooleanType) {
                String col = "`" + attr.name().replace("`", "``") + "`";
                Row counts = df.selectExpr("count_if(" + col + ")", "count_if(NOT " + col + ")").first();
                o.put("true_count", counts.getLong(0));
                o.put("false_count", counts.getLong(1));
            }
        }
    }
}
