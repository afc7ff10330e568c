package io.gluecat.spark.internal;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.csv.CSVScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.json.JsonScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.orc.OrcScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScanBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.collection.immutable.Seq;

/** Spark's own file scans (vectorized reads, filter pushdown, column pruning) over the catalog's files. */
public final class Scans {
    private Scans() {}

    /** The Spark version these internals are written against; the shim refuses to load on another. */
    public static final String SPARK_VERSION = "4.3";

    public static void checkVersion(String running) {
        if (!running.startsWith(SPARK_VERSION + ".") && !running.equals(SPARK_VERSION)) {
            throw new IllegalStateException("gluecat's Spark shim supports Spark " + SPARK_VERSION
                + ".x only (it uses Spark's file-source internals), but this is Spark " + running);
        }
    }

    public static ScanBuilder builder(SparkSession spark, GlueFileIndex index, StructType schema, StructType dataSchema,
            String format, CaseInsensitiveStringMap options) {
        // Each builder hands its partition filters to the index as soon as Spark pushes them.
        switch (format) {
            case "parquet":
                return new ParquetScanBuilder(spark, index, schema, dataSchema, options) {
                    @Override
                    public Seq<Expression> pushFilters(Seq<Expression> filters) {
                        Seq<Expression> rest = super.pushFilters(filters);
                        index.plan(partitionFilters());
                        return rest;
                    }
                };
            case "orc":
                return new OrcScanBuilder(spark, index, schema, dataSchema, options) {
                    @Override
                    public Seq<Expression> pushFilters(Seq<Expression> filters) {
                        Seq<Expression> rest = super.pushFilters(filters);
                        index.plan(partitionFilters());
                        return rest;
                    }
                };
            case "csv":
                return new CSVScanBuilder(spark, index, schema, dataSchema, options) {
                    @Override
                    public Seq<Expression> pushFilters(Seq<Expression> filters) {
                        Seq<Expression> rest = super.pushFilters(filters);
                        index.plan(partitionFilters());
                        return rest;
                    }
                };
            case "json":
                return new JsonScanBuilder(spark, index, schema, dataSchema, options) {
                    @Override
                    public Seq<Expression> pushFilters(Seq<Expression> filters) {
                        Seq<Expression> rest = super.pushFilters(filters);
                        index.plan(partitionFilters());
                        return rest;
                    }
                };
            default:
                throw new IllegalArgumentException("gluecat: Spark cannot read format " + format);
        }
    }
}
