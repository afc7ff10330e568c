package io.gluecat.spark.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.connector.distributions.Distribution;
import org.apache.spark.sql.connector.distributions.Distributions;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.LiteralValue;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
import org.apache.spark.sql.connector.expressions.filter.AlwaysFalse;
import org.apache.spark.sql.connector.expressions.filter.AlwaysTrue;
import org.apache.spark.sql.connector.expressions.filter.And;
import org.apache.spark.sql.connector.expressions.filter.Not;
import org.apache.spark.sql.connector.expressions.filter.Or;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.RequiresDistributionAndOrdering;
import org.apache.spark.sql.connector.write.SupportsDynamicOverwrite;
import org.apache.spark.sql.connector.write.SupportsOverwrite;
import org.apache.spark.sql.connector.write.SupportsTruncate;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.execution.datasources.FileFormat;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.PartitioningUtils;
import org.apache.spark.sql.execution.datasources.WriteJobDescription;
import org.apache.spark.sql.execution.datasources.WriteTaskResult;
import org.apache.spark.sql.execution.datasources.csv.CSVFileFormat;
import org.apache.spark.sql.execution.datasources.json.JsonFileFormat;
import org.apache.spark.sql.execution.datasources.orc.OrcFileFormat;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.execution.datasources.v2.FileBatchWrite;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Writes through Spark's own file writers (FileBatchWrite), into a staging folder of the table's location
 * that is private to the job, so concurrent jobs never share a _temporary folder. What happens to the files
 * then (moved into each partition's folder, overwritten files deleted, partitions registered, the staging
 * folder removed) is the Python catalog's: this class only says which partitions the job wrote.
 */
public final class GlueWrite {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GlueWrite.class);
    /** How long a failed job's abort waits for its tasks that still write (in this JVM). */
    private static final long ABORT_WAIT_MILLIS = 60_000;

    private GlueWrite() {}

    /** How the write treats existing data. */
    public enum Mode { APPEND, OVERWRITE_BY_FILTER, OVERWRITE_DYNAMIC, TRUNCATE }

    /**
     * The catalog's side of a write (implemented by the table, answered by Python, which owns the data files):
     * a staging folder for the job, then either its commit or its abort.
     */
    public interface Target {
        /** A staging folder private to this job, inside the table's folder, where Spark's writers put its files. */
        String begin();

        /** The job's files, by partition (its folder under the staging folder and its values, in key order), move
         * into place, the files the write replaces go, and the partitions are registered in one catalog commit;
         * the staging folder goes in any case. */
        void commit(String staging, Mode mode, Filter[] filters, List<String> fragments, List<List<String>> values);

        /** A failed job: its staging folder goes. */
        void abort(String staging);
    }

    public static WriteBuilder builder(SparkSession spark, LogicalWriteInfo info, String format, String location,
            List<String> partitionNames, Map<String, String> options, Target target) {
        return new Builder(spark, info, format, location, partitionNames, options, target);
    }

    private static final class Builder implements SupportsOverwrite, SupportsDynamicOverwrite, SupportsTruncate {
        private final SparkSession spark;
        private final LogicalWriteInfo info;
        private final String format;
        private final String location;
        private final List<String> partitionNames;
        private final Map<String, String> options;
        private final Target target;
        private Mode mode = Mode.APPEND;
        private Filter[] filters = new Filter[0];

        Builder(SparkSession spark, LogicalWriteInfo info, String format, String location, List<String> partitionNames,
                Map<String, String> options, Target target) {
            this.spark = spark;
            this.info = info;
            this.format = format;
            this.location = location;
            this.partitionNames = partitionNames;
            this.options = options;
            this.target = target;
        }

        @Override
        public boolean canOverwrite(Filter[] filters) {
            for (Filter f : filters) {
                for (String ref : f.references()) {
                    if (partitionNames.stream().noneMatch(ref::equalsIgnoreCase)) {
                        return false;
                    }
                }
            }
            return true;
        }

        @Override
        public boolean canOverwrite(Predicate[] predicates) {
            return SupportsOverwrite.super.canOverwrite(booleanOperands(predicates));
        }

        @Override
        public WriteBuilder overwrite(Predicate[] predicates) {
            return SupportsOverwrite.super.overwrite(booleanOperands(predicates));
        }

        @Override
        public WriteBuilder overwrite(Filter[] filters) {
            this.mode = Mode.OVERWRITE_BY_FILTER;
            this.filters = filters;
            return this;
        }

        @Override
        public WriteBuilder overwriteDynamicPartitions() {
            this.mode = Mode.OVERWRITE_DYNAMIC;
            return this;
        }

        @Override
        public WriteBuilder truncate() {
            this.mode = Mode.TRUNCATE;
            return this;
        }

        @Override
        public Write build() {
            return new FileWrite(this);
        }
    }

    /**
     * Spark translates the literal of {@code b <=> true} (a static {@code PARTITION (b=true)}) into the
     * predicate ALWAYS_TRUE, which Spark's own conversion to Filters refuses as an operand, so every
     * overwrite of a boolean partition failed. The literal goes back to a boolean value here.
     */
    static Predicate[] booleanOperands(Predicate[] predicates) {
        Predicate[] out = new Predicate[predicates.length];
        for (int i = 0; i < predicates.length; i++) {
            out[i] = booleanOperands(predicates[i]);
        }
        return out;
    }

    private static Predicate booleanOperands(Predicate p) {
        if (p instanceof And a) {
            return new And(booleanOperands(a.left()), booleanOperands(a.right()));
        }
        if (p instanceof Or o) {
            return new Or(booleanOperands(o.left()), booleanOperands(o.right()));
        }
        if (p instanceof Not n) {
            return new Not(booleanOperands(n.child()));
        }
        if (p instanceof AlwaysTrue || p instanceof AlwaysFalse) {
            return p;
        }
        Expression[] children = p.children();
        Expression[] operands = new Expression[children.length];
        boolean changed = false;
        for (int i = 0; i < children.length; i++) {
            operands[i] = children[i];
            if (children[i] instanceof AlwaysTrue) {
                operands[i] = new LiteralValue<>(Boolean.TRUE, DataTypes.BooleanType);
            } else if (children[i] instanceof AlwaysFalse) {
                operands[i] = new LiteralValue<>(Boolean.FALSE, DataTypes.BooleanType);
            }
            changed |= operands[i] != children[i];
        }
        return changed ? new Predicate(p.name(), operands) : p;
    }

    private static final class FileWrite implements RequiresDistributionAndOrdering {
        private final Builder b;

        FileWrite(Builder b) {
            this.b = b;
        }

        @Override
        public String description() {
            return "gluecat " + b.format + " write (" + b.mode + ")";
        }

        @Override
        public Distribution requiredDistribution() {
            return Distributions.unspecified();
        }

        @Override
        public SortOrder[] requiredOrdering() {
            // Spark's partitioned file writer opens one file per run of equal partition values.
            SortOrder[] out = new SortOrder[b.partitionNames.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = Expressions.sort(Expressions.column(b.partitionNames.get(i)), SortDirection.ASCENDING);
            }
            return out;
        }

        @Override
        public BatchWrite toBatch() {
            return new StagedBatchWrite(b);
        }
    }

    private static FileFormat fileFormat(String format) {
        switch (format) {
            case "parquet":
                return new ParquetFileFormat();
            case "orc":
                return new OrcFileFormat();
            case "csv":
                return new CSVFileFormat();
            case "json":
                return new JsonFileFormat();
            default:
                throw new IllegalArgumentException("gluecat: cannot write format " + format);
        }
    }

    private static final class StagedBatchWrite implements BatchWrite {
        private final Builder b;
        private final String stagingName;
        private final Path staging;
        private final FileBatchWrite delegate;
        private final String jobId = UUID.randomUUID().toString();

        StagedBatchWrite(Builder b) {
            this.b = b;
            SQLConf conf = b.spark.sessionState().conf();
            Configuration hadoopConf = b.spark.sessionState().newHadoopConfWithOptions(Scala.map(b.options));
            this.stagingName = b.target.begin();
            this.staging = GlueFileIndex.qualify(hadoopConf, stagingName);
            try {
                Job job = Job.getInstance(hadoopConf);
                job.setOutputKeyClass(Void.class);
                job.setOutputValueClass(InternalRow.class);
                FileOutputFormat.setOutputPath(job, staging);

                StructType schema = b.info.schema();
                List<Attribute> all = new ArrayList<>(Scala.list(DataTypeUtils.toAttributes(schema)));
                List<Attribute> data = new ArrayList<>();
                List<Attribute> parts = new ArrayList<>();
                for (String name : b.partitionNames) {
                    for (Attribute a : all) {
                        if (a.name().equalsIgnoreCase(name)) {
                            parts.add(a);
                        }
                    }
                }
                StructType dataSchema = new StructType();
                for (int i = 0; i < all.size(); i++) {
                    if (!parts.contains(all.get(i))) {
                        data.add(all.get(i));
                        StructField f = schema.fields()[i];
                        dataSchema = dataSchema.add(f);
                    }
                }
                OutputWriterFactory writers = HiveText.FORMAT.equals(b.format)
                    ? HiveText.writers(b.spark, job, dataSchema, b.options, staging.toString())
                    : fileFormat(b.format).prepareWrite(b.spark, job, Scala.map(b.options), dataSchema);
                FileCommitProtocol committer = FileCommitProtocol.instantiate(conf.fileCommitProtocolClass(), jobId,
                    staging.toString(), false);
                WriteJobDescription description = new WriteJobDescription(UUID.randomUUID().toString(),
                    new SerializableConfiguration(job.getConfiguration()), writers, Scala.seq(all), Scala.seq(data),
                    Scala.seq(parts), scala.Option.empty(), staging.toString(), Scala.map(Map.of()),
                    conf.maxRecordsPerFile(), conf.sessionLocalTimeZone(), Scala.seq(List.of()));
                committer.setupJob(job);
                this.delegate = new FileBatchWrite(job, description, committer);
            } catch (IOException e) {
                throw new IllegalStateException("gluecat: cannot set up the write to " + b.location, e);
            }
        }

        @Override
        public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
            return JobWriters.tracked(jobId, delegate.createBatchWriterFactory(info));
        }

        @Override
        public boolean useCommitCoordinator() {
            return delegate.useCommitCoordinator();
        }

        @Override
        public void commit(WriterCommitMessage[] messages) {
            java.util.Set<String> fragments = new java.util.TreeSet<>();
            for (WriterCommitMessage m : messages) {
                if (m instanceof WriteTaskResult r) {
                    fragments.addAll(Scala.list(r.summary().updatedPartitions()));
                }
            }
            List<String> ordered = new ArrayList<>(fragments);
            if (b.partitionNames.isEmpty()) {
                ordered = List.of("");
            }
            List<List<String>> written = new ArrayList<>();
            for (String fragment : ordered) {
                List<String> values = new ArrayList<>();
                if (!fragment.isEmpty()) {
                    for (scala.Tuple2<String, String> kv : Scala.list(PartitioningUtils.parsePathFragmentAsSeq(fragment))) {
                        values.add(kv._2());
                    }
                }
                written.add(values);
            }
            JobWriters.forget(jobId);  // every task has ended
            delegate.commit(messages);  // the tasks' files, now in the staging folder
            b.target.commit(stagingName, b.mode, b.filters, ordered, written);
        }

        @Override
        public void abort(WriterCommitMessage[] messages) {
            try {
                // Tasks Spark has not stopped yet may still write: none may start, and those writing end,
                // before the staging folder goes. The job stays closed (a few bytes kept per failed job).
                if (!JobWriters.closeAndWait(jobId, ABORT_WAIT_MILLIS)) {
                    LOG.warn("gluecat: tasks of the failed write job {} still write after {} ms; files they"
                        + " write to {} may stay behind", jobId, ABORT_WAIT_MILLIS, stagingName);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try {
                delegate.abort(messages);
            } finally {
                b.target.abort(stagingName);
            }
        }
    }
}
