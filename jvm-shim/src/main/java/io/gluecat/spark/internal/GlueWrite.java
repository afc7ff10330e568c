package io.gluecat.spark.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
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
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.SortDirection;
import org.apache.spark.sql.connector.expressions.SortOrder;
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
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Writes through Spark's own file writers (FileBatchWrite), into a staging folder of the table's location
 * that is private to the job, so concurrent jobs never share a _temporary folder. On commit the files move
 * to the catalog's folder of each partition, the overwritten files are deleted, and then the catalog
 * registers new partitions (and drops emptied ones) in one commit. A failed job registers nothing.
 */
public final class GlueWrite {
    private GlueWrite() {}

    /** How the write treats existing data. */
    public enum Mode { APPEND, OVERWRITE_BY_FILTER, OVERWRITE_DYNAMIC, TRUNCATE }

    /** What the catalog decides for a finished write (implemented by the table, answered by Python). */
    public interface Target {
        /** For the partitions written (values per partition, in key order): where each goes, what is overwritten. */
        Plan plan(Mode mode, Filter[] filters, List<List<String>> written);

        /** Registers the written partitions and drops the emptied ones, in one catalog commit. */
        void commit(Plan plan);
    }

    /** The catalog's answer: one target folder per written partition, folders whose old files go. */
    public record Plan(List<String> targets, List<String> overwritten, Object token) {}

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
        private final Path staging;
        private final FileBatchWrite delegate;
        private final Configuration hadoopConf;

        StagedBatchWrite(Builder b) {
            this.b = b;
            SQLConf conf = b.spark.sessionState().conf();
            String jobId = UUID.randomUUID().toString();
            this.hadoopConf = b.spark.sessionState().newHadoopConfWithOptions(Scala.map(b.options));
            Path root = GlueFileIndex.qualify(hadoopConf, b.location);
            this.staging = new Path(root, ".gluecat-staging-" + jobId);
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
                OutputWriterFactory writers = fileFormat(b.format).prepareWrite(b.spark, job, Scala.map(b.options),
                    dataSchema);
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
            return delegate.createBatchWriterFactory(info);
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
            try {
                delegate.commit(messages);
                Plan plan = b.target.plan(b.mode, b.filters, written);
                FileSystem fs = staging.getFileSystem(hadoopConf);
                List<Path> old = new ArrayList<>();
                for (String folder : plan.overwritten()) {
                    Path p = GlueFileIndex.qualify(hadoopConf, folder);
                    if (fs.exists(p)) {
                        for (FileStatus s : fs.listStatus(p)) {
                            if (s.isFile() && visible(s.getPath())) {
                                old.add(s.getPath());
                            }
                        }
                    }
                }
                for (int i = 0; i < ordered.size(); i++) {
                    Path from = ordered.get(i).isEmpty() ? staging : new Path(staging, ordered.get(i));
                    Path to = GlueFileIndex.qualify(hadoopConf, plan.targets().get(i));
                    fs.mkdirs(to);
                    if (!fs.exists(from)) {
                        continue;
                    }
                    for (FileStatus s : fs.listStatus(from)) {
                        if (s.isFile() && visible(s.getPath())) {
                            Path dest = new Path(to, s.getPath().getName());
                            if (!fs.rename(s.getPath(), dest)) {
                                throw new IOException("cannot move " + s.getPath() + " to " + dest);
                            }
                        }
                    }
                }
                for (Path p : old) {
                    fs.delete(p, false);
                }
                b.target.commit(plan);
            } catch (IOException e) {
                throw new IllegalStateException("gluecat: committing the write to " + b.location + " failed", e);
            } finally {
                cleanup();
            }
        }

        private static boolean visible(Path p) {
            String n = p.getName();
            return !n.startsWith("_") && !n.startsWith(".");
        }

        private void cleanup() {
            try {
                staging.getFileSystem(hadoopConf).delete(staging, true);
            } catch (IOException e) {
                // A leftover staging folder is hidden from readers (its name starts with a dot).
            }
        }

        @Override
        public void abort(WriterCommitMessage[] messages) {
            try {
                delegate.abort(messages);
            } finally {
                cleanup();
            }
        }
    }
}
