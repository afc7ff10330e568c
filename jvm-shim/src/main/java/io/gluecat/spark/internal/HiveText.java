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
import org.apache.spark.sql.execution.datasources.OutputWriter;
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
        OutputWriterFactory hive = format.prepareWrite(spark, job, Scala.map(options), dataSchema);
        RowCheck check = RowCheck.of(dataSchema, options);
        return check == null ? hive : new CheckedWriters(hive, check);
    }

    /** Hive's LazySerDeParameters.getByte: a number is the byte it names ("1" is ^A), else the first byte. */
    private static byte serdeByte(String value, byte fallback) {
        if (value == null || value.isEmpty()) {
            return fallback;
        }
        try {
            return Byte.parseByte(value);
        } catch (NumberFormatException e) {
            return value.getBytes(java.nio.charset.StandardCharsets.UTF_8)[0];
        }
    }

    /**
     * The values Hive's text SerDe writes so that they read back as something else, refused before they are
     * written: without {@code escape.delim} a string holding the field delimiter is split into the next
     * columns, and without {@code serialization.escape.crlf} a line break ends the row; a string equal to the
     * null sequence ({@code \N}) reads as NULL. Top-level string columns only (nested values have their own
     * delimiters).
     */
    static final class RowCheck implements Serializable {
        private static final long serialVersionUID = 1L;
        private final int[] ordinals;
        private final String[] names;
        private final byte delimiter;
        private final boolean escaped;
        private final boolean escapesLineBreaks;
        private final byte[] nullSequence;

        private RowCheck(int[] ordinals, String[] names, Map<String, String> options) {
            this.ordinals = ordinals;
            this.names = names;
            this.delimiter = serdeByte(options.getOrDefault("field.delim", options.get("serialization.format")),
                (byte) 1);
            this.escaped = options.get("escape.delim") != null && !options.get("escape.delim").isEmpty();
            this.escapesLineBreaks = escaped && "true".equalsIgnoreCase(options.get("serialization.escape.crlf"));
            this.nullSequence = options.getOrDefault("serialization.null.format", "\\N")
                .getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }

        /** The check of a table's string columns, or null when it has none. */
        static RowCheck of(StructType dataSchema, Map<String, String> options) {
            List<Integer> ordinals = new ArrayList<>();
            List<String> names = new ArrayList<>();
            for (int i = 0; i < dataSchema.fields().length; i++) {
                StructField f = dataSchema.fields()[i];
                if (f.dataType() instanceof org.apache.spark.sql.types.StringType) {
                    ordinals.add(i);
                    names.add(f.name());
                }
            }
            return ordinals.isEmpty() ? null
                : new RowCheck(ordinals.stream().mapToInt(Integer::intValue).toArray(), names.toArray(new String[0]),
                    options);
        }

        void check(InternalRow row) {
            for (int k = 0; k < ordinals.length; k++) {
                if (row.isNullAt(ordinals[k])) {
                    continue;
                }
                byte[] bytes = row.getUTF8String(ordinals[k]).getBytes();
                if (java.util.Arrays.equals(bytes, nullSequence)) {
                    refuse(k, "equals the table's null sequence (serialization.null.format), so it would read as NULL");
                }
                for (byte b : bytes) {
                    if (b == delimiter && !escaped) {
                        refuse(k, "holds the field delimiter and the table's SerDe has no escape.delim, so it would "
                            + "read back split into the next columns");
                    }
                    if ((b == '\n' || b == '\r') && !escapesLineBreaks) {
                        refuse(k, "holds a line break, which the table's SerDe does not escape (escape.delim with "
                            + "serialization.escape.crlf=true), so it would read back as two rows");
                    }
                }
            }
        }

        private void refuse(int k, String why) {
            throw new IllegalArgumentException("gluecat: a value of column " + names[k] + " " + why
                + "; nothing was written (Hive's text SerDe, LazySimpleSerDe, writes it as it is)");
        }
    }

    /** Hive's writers with each row checked first (RowCheck). */
    static final class CheckedWriters extends OutputWriterFactory {
        private static final long serialVersionUID = 1L;
        private final OutputWriterFactory hive;
        private final RowCheck check;

        CheckedWriters(OutputWriterFactory hive, RowCheck check) {
            this.hive = hive;
            this.check = check;
        }

        @Override
        public String getFileExtension(org.apache.hadoop.mapreduce.TaskAttemptContext context) {
            return hive.getFileExtension(context);
        }

        @Override
        public OutputWriter newInstance(String path, StructType dataSchema,
                org.apache.hadoop.mapreduce.TaskAttemptContext context) {
            OutputWriter writer = hive.newInstance(path, dataSchema, context);
            return new OutputWriter() {
                @Override
                public void write(InternalRow row) {
                    check.check(row);
                    writer.write(row);
                }

                @Override
                public void close() {
                    writer.close();
                }

                @Override
                public String path() {
                    return writer.path();
                }
            };
        }
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
