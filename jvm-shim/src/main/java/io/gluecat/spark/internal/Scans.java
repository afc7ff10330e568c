package io.gluecat.spark.internal;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.VariantExtraction;
import org.apache.spark.sql.execution.WholeStageCodegenExec$;
import org.apache.spark.sql.execution.datasources.PartitioningAwareFileIndex;
import org.apache.spark.sql.execution.datasources.orc.OrcUtils;
import org.apache.spark.sql.execution.datasources.parquet.ParquetUtils;
import org.apache.spark.sql.execution.datasources.v2.csv.CSVScan;
import org.apache.spark.sql.execution.datasources.v2.csv.CSVScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.json.JsonPartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.v2.json.JsonScan;
import org.apache.spark.sql.execution.datasources.v2.json.JsonScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.orc.OrcScan;
import org.apache.spark.sql.execution.datasources.v2.orc.OrcScanBuilder;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScan;
import org.apache.spark.sql.execution.datasources.v2.parquet.ParquetScanBuilder;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Option;
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

    /** Statistics the catalog holds (ANALYZE's), reported in place of the file listing's estimate. */
    interface Reported {
        Statistics catalogStatistics();

        void catalogStatistics(Statistics stats);
    }

    private static Statistics reported(Reported scan, java.util.function.Supplier<Statistics> listing) {
        Statistics stats = scan.catalogStatistics();
        return stats != null ? stats : listing.get();
    }

    private static <T extends Scan> T with(T scan, Statistics stats) {
        ((Reported) scan).catalogStatistics(stats);
        return scan;
    }

    public static ScanBuilder builder(SparkSession spark, GlueFileIndex index, StructType schema, StructType dataSchema,
            String format, CaseInsensitiveStringMap options, Statistics stats) {
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

                    @Override
                    public ParquetScan build() {
                        ParquetScan s = super.build();
                        return with(new ColumnarParquetScan(s.sparkSession(), s.hadoopConf(), s.fileIndex(), s.dataSchema(),
                            s.readDataSchema(), s.readPartitionSchema(), s.pushedFilters(), s.options(),
                            s.pushedAggregate(), s.partitionFilters(), s.dataFilters(), s.pushedVariantExtractions()), stats);
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

                    @Override
                    public OrcScan build() {
                        OrcScan s = super.build();
                        return with(new ColumnarOrcScan(s.sparkSession(), s.hadoopConf(), s.fileIndex(), s.dataSchema(),
                            s.readDataSchema(), s.readPartitionSchema(), s.options(), s.pushedAggregate(),
                            s.pushedFilters(), s.partitionFilters(), s.dataFilters()), stats);
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

                    @Override
                    public CSVScan build() {
                        CSVScan s = super.build();
                        return with(new RowCSVScan(s.sparkSession(), s.fileIndex(), s.dataSchema(), s.readDataSchema(),
                            s.readPartitionSchema(), s.options(), s.pushedFilters(), s.partitionFilters(),
                            s.dataFilters()), stats);
                    }
                };
            case HiveText.FORMAT:
                return new CSVScanBuilder(spark, index, schema, dataSchema, options) {
                    @Override
                    public Seq<Expression> pushFilters(Seq<Expression> filters) {
                        Seq<Expression> rest = super.pushFilters(filters);
                        index.plan(partitionFilters());
                        return rest;
                    }

                    @Override
                    public CSVScan build() {
                        CSVScan s = super.build();
                        return with(new HiveTextScan(s.sparkSession(), s.fileIndex(), s.dataSchema(), s.readDataSchema(),
                            s.readPartitionSchema(), s.options(), s.pushedFilters(), s.partitionFilters(),
                            s.dataFilters()), stats);
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

                    @Override
                    public JsonScan build() {
                        JsonScan s = super.build();
                        return with(new RowJsonScan(s.sparkSession(), s.fileIndex(), s.dataSchema(), s.readDataSchema(),
                            s.readPartitionSchema(), s.options(), s.pushedFilters(), s.partitionFilters(),
                            s.dataFilters()), stats);
                    }
                };
            default:
                throw new IllegalArgumentException("gluecat: Spark cannot read format " + format);
        }
    }

    // Spark asks a scan whether it reads columnar batches while planning. Its file scans answer
    // PARTITION_DEFINED, so BatchScanExec builds the reader factory to ask it, which broadcasts the
    // Hadoop configuration (about 20 ms) before a single file is read. The answer depends only on the
    // schema and the session's settings, so these scans give it up front, by the same rules as the
    // reader factories of Spark 4.3, and the broadcast waits for execution as in Spark's v1 path.
    // copy() is overridden because withFilters (partition pruning) copies the scan.

    private static Scan.ColumnarSupportMode mode(boolean columnar) {
        return columnar ? Scan.ColumnarSupportMode.SUPPORTED : Scan.ColumnarSupportMode.UNSUPPORTED;
    }

    private static StructType resultSchema(StructType data, StructType partition) {
        StructType result = data;
        for (StructField field : partition.fields()) {
            result = result.add(field);
        }
        return result;
    }

    /** ParquetPartitionReaderFactory.supportColumnarReads, decided without building the factory. */
    static final class ColumnarParquetScan extends ParquetScan implements Reported {
        private Statistics catalogStats;

        @Override
        public Statistics catalogStatistics() {
            return catalogStats;
        }

        @Override
        public void catalogStatistics(Statistics stats) {
            this.catalogStats = stats;
        }

        @Override
        public Statistics estimateStatistics() {
            return reported(this, super::estimateStatistics);
        }

        ColumnarParquetScan(SparkSession spark, Configuration hadoopConf, PartitioningAwareFileIndex fileIndex,
                StructType dataSchema, StructType readDataSchema, StructType readPartitionSchema,
                Filter[] pushedFilters, CaseInsensitiveStringMap options, Option<Aggregation> pushedAggregate,
                Seq<Expression> partitionFilters, Seq<Expression> dataFilters, VariantExtraction[] variants) {
            super(spark, hadoopConf, fileIndex, dataSchema, readDataSchema, readPartitionSchema, pushedFilters,
                options, pushedAggregate, partitionFilters, dataFilters, variants);
        }

        @Override
        public Scan.ColumnarSupportMode columnarSupportMode() {
            SQLConf conf = sparkSession().sessionState().conf();
            StructType result = resultSchema(readDataSchema(), readPartitionSchema());
            return mode(ParquetUtils.isBatchReadSupportedForSchema(conf, result) && conf.wholeStageEnabled()
                && !WholeStageCodegenExec$.MODULE$.isTooManyFields(conf, result));
        }

        @Override
        public ParquetScan copy(SparkSession spark, Configuration hadoopConf, PartitioningAwareFileIndex fileIndex,
                StructType dataSchema, StructType readDataSchema, StructType readPartitionSchema,
                Filter[] pushedFilters, CaseInsensitiveStringMap options, Option<Aggregation> pushedAggregate,
                Seq<Expression> partitionFilters, Seq<Expression> dataFilters, VariantExtraction[] variants) {
            return with(new ColumnarParquetScan(spark, hadoopConf, fileIndex, dataSchema, readDataSchema,
                readPartitionSchema, pushedFilters, options, pushedAggregate, partitionFilters, dataFilters, variants), catalogStats);
        }
    }

    /** OrcPartitionReaderFactory.supportColumnarReads, decided without building the factory. */
    static final class ColumnarOrcScan extends OrcScan implements Reported {
        private Statistics catalogStats;

        @Override
        public Statistics catalogStatistics() {
            return catalogStats;
        }

        @Override
        public void catalogStatistics(Statistics stats) {
            this.catalogStats = stats;
        }

        @Override
        public Statistics estimateStatistics() {
            return reported(this, super::estimateStatistics);
        }

        ColumnarOrcScan(SparkSession spark, Configuration hadoopConf, PartitioningAwareFileIndex fileIndex,
                StructType dataSchema, StructType readDataSchema, StructType readPartitionSchema,
                CaseInsensitiveStringMap options, Option<Aggregation> pushedAggregate, Filter[] pushedFilters,
                Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            super(spark, hadoopConf, fileIndex, dataSchema, readDataSchema, readPartitionSchema, options,
                pushedAggregate, pushedFilters, partitionFilters, dataFilters);
        }

        @Override
        public Scan.ColumnarSupportMode columnarSupportMode() {
            SQLConf conf = sparkSession().sessionState().conf();
            StructType result = resultSchema(readDataSchema(), readPartitionSchema());
            boolean columnar = conf.orcVectorizedReaderEnabled() && conf.wholeStageEnabled()
                && !WholeStageCodegenExec$.MODULE$.isTooManyFields(conf, result);
            for (StructField field : result.fields()) {
                columnar = columnar
                    && OrcUtils.supportColumnarReads(field.dataType(), conf.orcVectorizedReaderNestedColumnEnabled());
            }
            return mode(columnar);
        }

        @Override
        public OrcScan copy(SparkSession spark, Configuration hadoopConf, PartitioningAwareFileIndex fileIndex,
                StructType dataSchema, StructType readDataSchema, StructType readPartitionSchema,
                CaseInsensitiveStringMap options, Option<Aggregation> pushedAggregate, Filter[] pushedFilters,
                Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            return with(new ColumnarOrcScan(spark, hadoopConf, fileIndex, dataSchema, readDataSchema, readPartitionSchema,
                options, pushedAggregate, pushedFilters, partitionFilters, dataFilters), catalogStats);
        }
    }

    /** Spark's text readers never read columnar batches. */
    static final class RowCSVScan extends CSVScan implements Reported {
        private Statistics catalogStats;

        @Override
        public Statistics catalogStatistics() {
            return catalogStats;
        }

        @Override
        public void catalogStatistics(Statistics stats) {
            this.catalogStats = stats;
        }

        @Override
        public Statistics estimateStatistics() {
            return reported(this, super::estimateStatistics);
        }

        RowCSVScan(SparkSession spark, PartitioningAwareFileIndex fileIndex, StructType dataSchema,
                StructType readDataSchema, StructType readPartitionSchema, CaseInsensitiveStringMap options,
                Filter[] pushedFilters, Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            super(spark, fileIndex, dataSchema, readDataSchema, readPartitionSchema, options, pushedFilters,
                partitionFilters, dataFilters);
        }

        @Override
        public Scan.ColumnarSupportMode columnarSupportMode() {
            return Scan.ColumnarSupportMode.UNSUPPORTED;
        }

        @Override
        public CSVScan copy(SparkSession spark, PartitioningAwareFileIndex fileIndex, StructType dataSchema,
                StructType readDataSchema, StructType readPartitionSchema, CaseInsensitiveStringMap options,
                Filter[] pushedFilters, Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            return with(new RowCSVScan(spark, fileIndex, dataSchema, readDataSchema, readPartitionSchema, options,
                pushedFilters, partitionFilters, dataFilters), catalogStats);
        }
    }

    /** Hive text: a CSV scan's planning (splits, pruning, filters Spark applies again) with Hive's SerDe reading. */
    static final class HiveTextScan extends CSVScan implements Reported {
        private Statistics catalogStats;

        @Override
        public Statistics catalogStatistics() {
            return catalogStats;
        }

        @Override
        public void catalogStatistics(Statistics stats) {
            this.catalogStats = stats;
        }

        @Override
        public Statistics estimateStatistics() {
            return reported(this, super::estimateStatistics);
        }

        HiveTextScan(SparkSession spark, PartitioningAwareFileIndex fileIndex, StructType dataSchema,
                StructType readDataSchema, StructType readPartitionSchema, CaseInsensitiveStringMap options,
                Filter[] pushedFilters, Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            super(spark, fileIndex, dataSchema, readDataSchema, readPartitionSchema, options, pushedFilters,
                partitionFilters, dataFilters);
        }

        @Override
        public Scan.ColumnarSupportMode columnarSupportMode() {
            return Scan.ColumnarSupportMode.UNSUPPORTED;
        }

        @Override
        public org.apache.spark.sql.connector.read.PartitionReaderFactory createReaderFactory() {
            Configuration conf = sparkSession().sessionState().newHadoopConfWithOptions(Scala.map(options()));
            return HiveText.readers(sparkSession(), conf, dataSchema(), readDataSchema(), readPartitionSchema(),
                options().asCaseSensitiveMap());
        }

        @Override
        public CSVScan copy(SparkSession spark, PartitioningAwareFileIndex fileIndex, StructType dataSchema,
                StructType readDataSchema, StructType readPartitionSchema, CaseInsensitiveStringMap options,
                Filter[] pushedFilters, Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            return with(new HiveTextScan(spark, fileIndex, dataSchema, readDataSchema, readPartitionSchema, options,
                pushedFilters, partitionFilters, dataFilters), catalogStats);
        }
    }

    /** Spark's text readers never read columnar batches. */
    static final class RowJsonScan extends JsonScan implements Reported {
        private Statistics catalogStats;

        @Override
        public Statistics catalogStatistics() {
            return catalogStats;
        }

        @Override
        public void catalogStatistics(Statistics stats) {
            this.catalogStats = stats;
        }

        @Override
        public Statistics estimateStatistics() {
            return reported(this, super::estimateStatistics);
        }

        RowJsonScan(SparkSession spark, PartitioningAwareFileIndex fileIndex, StructType dataSchema,
                StructType readDataSchema, StructType readPartitionSchema, CaseInsensitiveStringMap options,
                Filter[] pushedFilters, Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            super(spark, fileIndex, dataSchema, readDataSchema, readPartitionSchema, options, pushedFilters,
                partitionFilters, dataFilters);
        }

        @Override
        public Scan.ColumnarSupportMode columnarSupportMode() {
            return Scan.ColumnarSupportMode.UNSUPPORTED;
        }

        /** Spark's reader factory (its checks and options), matching keys to columns as the JSON SerDes do. */
        @Override
        public org.apache.spark.sql.connector.read.PartitionReaderFactory createReaderFactory() {
            return new JsonKeys.Readers((JsonPartitionReaderFactory) super.createReaderFactory(),
                JsonKeys.Rules.of(options()));
        }

        @Override
        public JsonScan copy(SparkSession spark, PartitioningAwareFileIndex fileIndex, StructType dataSchema,
                StructType readDataSchema, StructType readPartitionSchema, CaseInsensitiveStringMap options,
                Filter[] pushedFilters, Seq<Expression> partitionFilters, Seq<Expression> dataFilters) {
            return with(new RowJsonScan(spark, fileIndex, dataSchema, readDataSchema, readPartitionSchema, options,
                pushedFilters, partitionFilters, dataFilters), catalogStats);
        }
    }
}
