package io.gluecat.spark.internal;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat;
import org.apache.hadoop.hive.ql.plan.FileSinkDesc;
import org.apache.hadoop.hive.ql.plan.TableDesc;
import org.apache.hadoop.hive.serde2.Deserializer;
import org.apache.hadoop.hive.serde2.SerDeException;
import org.apache.hadoop.hive.serde2.SerDeUtils;
import org.apache.hadoop.io.Writable;
import org.apache.hadoop.mapred.TextInputFormat;
import org.apache.hadoop.mapreduce.Job;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FileSourceOptions;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.datasources.HadoopFileLinesReader;
import org.apache.spark.sql.execution.datasources.OutputWriterFactory;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.v2.FilePartitionReaderFactory;
import org.apache.spark.sql.execution.datasources.v2.PartitionReaderWithPartitionValues;
import org.apache.spark.sql.hive.HadoopTableReader$;
import org.apache.spark.sql.hive.execution.HiveFileFormat;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/**
 * Hive's delimited text (STORED AS TEXTFILE, LazySimpleSerDe), read and written with Hive's own SerDe, as Spark's
 * built-in Hive catalog does: the same bytes for delimiters, escapes, nulls ({@code \N}), empty strings and
 * nested columns. Writes go through Spark's HiveFileFormat; reads split each file into lines with Spark's
 * HadoopFileLinesReader and turn them into rows with Spark's HadoopTableReader.fillObject.
 */
public final class HiveText {
    public static final String FORMAT = "hive-text";
    static final String LAZY_SIMPLE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe";
    private static final String HEADER = "skip.header.line.count";

    private HiveText() {}

    /** The table properties Hive's SerDe reads: the SerDe parameters, the columns and their Hive types. */
    static Properties tableProperties(StructType dataSchema, Map<String, String> options) {
        Properties p = new Properties();
        options.forEach(p::setProperty);
        List<String> names = new ArrayList<>();
        List<String> types = new ArrayList<>();
        for (StructField f : dataSchema.fields()) {
            names.add(f.name());
            types.add(f.dataType().catalogString());
        }
        p.setProperty("columns", String.join(",", names));
        p.setProperty("columns.types", String.join(":", types));
        p.setProperty("serialization.lib", options.getOrDefault("serialization.lib", LAZY_SIMPLE));
        return p;
    }

    static OutputWriterFactory writers(SparkSession spark, Job job, StructType dataSchema, Map<String, String> options,
            String staging) {
        TableDesc table = new TableDesc(TextInputFormat.class, HiveIgnoreKeyTextOutputFormat.class,
            tableProperties(dataSchema, options));
        HiveFileFormat format = new HiveFileFormat(new FileSinkDesc(new Path(staging), table, false));
        return format.prepareWrite(spark, job, Scala.map(options), dataSchema);
    }

    static ReaderFactory readers(SparkSession spark, Configuration conf, StructType dataSchema,
            StructType readDataSchema, StructType partitionSchema, Map<String, String> options) {
        Broadcast<SerializableConfiguration> shared = SerializableConfiguration.broadcast(spark.sparkContext(), conf);
        return new ReaderFactory(shared, tableProperties(dataSchema, options), readDataSchema, partitionSchema,
            Integer.parseInt(options.getOrDefault(HEADER, "0")), options);
    }

    /** Lines of each file through the SerDe into rows of the read schema, then the partition's values. */
    static final class ReaderFactory extends FilePartitionReaderFactory implements Serializable {
        private final Broadcast<SerializableConfiguration> conf;
        private final Properties properties;
        private final StructType readDataSchema;
        private final StructType partitionSchema;
        private final int headerLines;
        private final FileSourceOptions fileOptions;

        ReaderFactory(Broadcast<SerializableConfiguration> conf, Properties properties, StructType readDataSchema,
                StructType partitionSchema, int headerLines, Map<String, String> options) {
            this.conf = conf;
            this.properties = properties;
            this.readDataSchema = readDataSchema;
            this.partitionSchema = partitionSchema;
            this.headerLines = headerLines;
            this.fileOptions = new FileSourceOptions(org.apache.spark.sql.catalyst.util.CaseInsensitiveMap$.MODULE$
                .apply(Scala.map(options)));
        }

        @Override
        public FileSourceOptions options() {
            return fileOptions;
        }

        @Override
        @SuppressWarnings("unchecked")
        public PartitionReader<InternalRow> buildReader(PartitionedFile file) {
            Configuration hadoop = conf.value().value();
            Deserializer serde;
            try {
                serde = (Deserializer) Class.forName(properties.getProperty("serialization.lib")).getDeclaredConstructor()
                    .newInstance();
                SerDeUtils.initializeSerDe(serde, hadoop, properties, null);
            } catch (ReflectiveOperationException | SerDeException e) {
                throw new IllegalStateException("gluecat: cannot set up Hive's SerDe for " + file.filePath(), e);
            }
            HadoopFileLinesReader lines = new HadoopFileLinesReader(file, hadoop);
            scala.collection.Iterator<Writable> input = (scala.collection.Iterator<Writable>) (Object) lines;
            if (file.start() == 0 && headerLines > 0) {
                input = input.drop(headerLines);
            }
            List<AttributeReference> attrs = Scala.list(DataTypeUtils.toAttributes(readDataSchema));
            List<scala.Tuple2<Attribute, Object>> indexed = new ArrayList<>();
            for (int i = 0; i < attrs.size(); i++) {
                indexed.add(new scala.Tuple2<>(attrs.get(i), i));
            }
            InternalRow row = new SpecificInternalRow(readDataSchema);
            scala.collection.Iterator<InternalRow> rows = HadoopTableReader$.MODULE$.fillObject(input, serde,
                Scala.seq(indexed), row, serde);
            PartitionReader<InternalRow> reader = new PartitionReader<>() {
                private InternalRow current;

                @Override
                public boolean next() {
                    if (!rows.hasNext()) {
                        return false;
                    }
                    current = rows.next();
                    return true;
                }

                @Override
                public InternalRow get() {
                    return current;
                }

                @Override
                public void close() throws IOException {
                    lines.close();
                }
            };
            return new PartitionReaderWithPartitionValues(reader, readDataSchema, partitionSchema,
                file.partitionValues());
        }
    }
}
