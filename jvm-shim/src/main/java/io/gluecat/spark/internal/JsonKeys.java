package io.gluecat.spark.internal;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.JsonParserDelegate;
import java.io.IOException;
import java.io.Serializable;
import java.io.Writer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.json.JSONOptions;
import org.apache.spark.sql.catalyst.json.JacksonParser;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.execution.datasources.json.JsonDataSource$;
import org.apache.spark.sql.execution.datasources.v2.PartitionReaderFromIterator;
import org.apache.spark.sql.execution.datasources.v2.PartitionReaderWithPartitionValues;
import org.apache.spark.sql.execution.datasources.v2.json.JsonPartitionReaderFactory;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.unsafe.types.UTF8String;
import scala.Function1;
import scala.Function2;
import scala.collection.immutable.Seq;

/**
 * JSON keys matched to columns as Hive's JSON SerDes match them, with the rest of Spark's JSON reading kept
 * (options, multiLine, corrupt records, filters evaluated while parsing). Spark's JSON reader finds a column
 * by its exact name; the OpenX, HCatalog and Hive JSON SerDes (so Hive, Athena and Spark on EMR) find it
 * case-insensitively, at every level of nested structs, and Glue's column names are lower case: a key
 * {@code "userId"} is column {@code userid} there and was NULL here. Each record's Jackson parser is wrapped
 * so that Spark's parser sees every key of a struct under the name of the field it matches (map keys and
 * the text of string and variant values stay as written).
 *
 * <p>Reader options (the table's SerDe parameters, which gluecat passes for OpenX tables only):
 * {@code case.insensitive} (OpenX's; anything but {@code true} matches keys exactly) and
 * {@code mapping.<field>} (OpenX's: the field is read from that key instead of its own name, at any level).
 * Of two keys of one object that name the same field, the first is read: Spark's parser evaluates pushed
 * filters as soon as a field is set, so a later value would not be the one the filter saw.
 */
final class JsonKeys {
    private JsonKeys() {}

    static final String CASE_INSENSITIVE = "case.insensitive";
    static final String MAPPING = "mapping.";

    /** How keys name fields: case-insensitively or not, and the fields read from another key. */
    static final class Rules implements Serializable {
        private static final long serialVersionUID = 1L;
        final boolean caseInsensitive;
        final Map<String, String> mappings;

        Rules(boolean caseInsensitive, Map<String, String> mappings) {
            this.caseInsensitive = caseInsensitive;
            this.mappings = mappings;
        }

        /** OpenX's reading of its parameters: case-insensitive unless {@code case.insensitive} is not "true". */
        static Rules of(CaseInsensitiveStringMap options) {
            Map<String, String> mappings = new HashMap<>();
            for (Map.Entry<String, String> e : options.entrySet()) {
                if (e.getKey().startsWith(MAPPING)) {
                    // the options' keys are lower-cased, as Glue's field names are
                    mappings.put(e.getKey().substring(MAPPING.length()), e.getValue());
                }
            }
            return new Rules("true".equalsIgnoreCase(options.getOrDefault(CASE_INSENSITIVE, "true")), mappings);
        }

        String key(String name) {
            return caseInsensitive ? name.toLowerCase(Locale.ROOT) : name;
        }

        /** The key a field is read from. */
        String keyOf(String field) {
            return key(mappings.getOrDefault(field.toLowerCase(Locale.ROOT), field));
        }
    }

    /** What a JSON value is read as: a struct (its keys are matched), a map or array of something, or other. */
    abstract static class Shape {
        static Shape of(DataType type, Rules rules) {
            if (type instanceof StructType struct) {
                return new Struct(struct, rules);
            }
            if (type instanceof MapType map) {
                return new Container(of(map.valueType(), rules), false);
            }
            if (type instanceof ArrayType array) {
                return new Container(of(array.elementType(), rules), true);
            }
            return null; // read as a whole (a string or variant keeps its text), or not at all
        }
    }

    static final class Struct extends Shape {
        final Rules rules;
        final String[] names;
        final Shape[] fields;
        final Map<String, Integer> byKey = new HashMap<>();
        /** A name no field has: what Spark's parser sees for a key to skip. */
        final String skipped;

        Struct(StructType struct, Rules rules) {
            this.rules = rules;
            StructField[] fs = struct.fields();
            names = new String[fs.length];
            fields = new Shape[fs.length];
            for (int i = 0; i < fs.length; i++) {
                names[i] = fs[i].name();
                fields[i] = Shape.of(fs[i].dataType(), rules);
                byKey.putIfAbsent(rules.keyOf(names[i]), i); // two fields with one key: the first has it
            }
            String name = "\u0000";
            while (struct.getFieldIndex(name).isDefined()) {
                name += "\u0000";
            }
            skipped = name;
        }

        int field(String key) {
            Integer i = byKey.get(rules.key(key));
            return i == null ? -1 : i;
        }
    }

    /** A map's values or an array's elements. */
    static final class Container extends Shape {
        final Shape values;
        final boolean array;

        Container(Shape values, boolean array) {
            this.values = values;
            this.array = array;
        }
    }

    /** An open JSON object or array and what it is read as. */
    private static final class Frame {
        final Shape shape;
        final boolean[] seen;
        int field = -1;
        String name;

        Frame(Shape shape) {
            this.shape = shape;
            this.seen = shape instanceof Struct s ? new boolean[s.names.length] : null;
        }
    }

    /**
     * One record's tokens with each key of a struct renamed to the field it matches, or to a name no field has
     * when it matches none or its field was already read. Spark's parser reads a record through nextToken,
     * currentName and skipChildren (and Jackson's copyCurrentStructure for string values, through nextToken).
     */
    static final class Parser extends JsonParserDelegate {
        private final Shape root;
        /** Spark reads a top-level array as one row per element. */
        private final Container rows;
        private final List<Frame> open = new ArrayList<>();

        Parser(JsonParser parser, Shape root, Container rows) {
            super(parser);
            this.root = root;
            this.rows = rows;
        }

        /** The shape of the value that starts at the current token. */
        private Shape starting() {
            if (open.isEmpty()) {
                return root;
            }
            Frame parent = open.get(open.size() - 1);
            if (parent.shape instanceof Struct s) {
                return parent.field < 0 ? null : s.fields[parent.field];
            }
            return parent.shape instanceof Container c ? c.values : null;
        }

        @Override
        public JsonToken nextToken() throws IOException {
            JsonToken token = delegate.nextToken();
            if (token == null) {
                return null;
            }
            switch (token) {
                case FIELD_NAME -> named(open.get(open.size() - 1));
                case START_OBJECT -> {
                    Shape shape = starting();
                    boolean keyed = shape instanceof Struct || shape instanceof Container c && !c.array;
                    open.add(new Frame(keyed ? shape : null));
                }
                case START_ARRAY -> {
                    Shape shape = open.isEmpty() ? rows : starting();
                    open.add(new Frame(shape instanceof Container c && c.array ? shape : null));
                }
                case END_OBJECT, END_ARRAY -> open.remove(open.size() - 1);
                default -> { }
            }
            return token;
        }

        private void named(Frame frame) throws IOException {
            if (!(frame.shape instanceof Struct s)) {
                return;
            }
            int i = s.field(delegate.currentName());
            if (i >= 0 && frame.seen[i]) {
                i = -1;
            }
            frame.field = i;
            if (i >= 0) {
                frame.seen[i] = true;
                frame.name = s.names[i];
            } else {
                frame.name = s.skipped;
            }
        }

        @Override
        public JsonToken nextValue() throws IOException {
            JsonToken token = nextToken();
            return token == JsonToken.FIELD_NAME ? nextToken() : token;
        }

        @Override
        public JsonParser skipChildren() throws IOException {
            JsonToken token = delegate.currentToken();
            delegate.skipChildren();
            if (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY) {
                open.remove(open.size() - 1);
            }
            return this;
        }

        /** The struct frame whose key names the current token, if the current token has a name in one. */
        private Frame naming() {
            JsonToken token = delegate.currentToken();
            int at = open.size() - (token == JsonToken.START_OBJECT || token == JsonToken.START_ARRAY ? 2 : 1);
            Frame frame = at >= 0 ? open.get(at) : null;
            return frame != null && frame.shape instanceof Struct && frame.name != null ? frame : null;
        }

        @Override
        public String currentName() throws IOException {
            Frame frame = naming();
            return frame != null ? frame.name : delegate.currentName();
        }

        @Override
        @SuppressWarnings("deprecation")
        public String getCurrentName() throws IOException {
            return currentName();
        }

        private boolean renamedKey() {
            return delegate.currentToken() == JsonToken.FIELD_NAME && naming() != null;
        }

        @Override
        public String getText() throws IOException {
            return renamedKey() ? currentName() : delegate.getText();
        }

        @Override
        public int getText(Writer writer) throws IOException {
            if (!renamedKey()) {
                return delegate.getText(writer);
            }
            String name = currentName();
            writer.write(name);
            return name.length();
        }

        @Override
        public char[] getTextCharacters() throws IOException {
            return renamedKey() ? currentName().toCharArray() : delegate.getTextCharacters();
        }

        @Override
        public int getTextLength() throws IOException {
            return renamedKey() ? currentName().length() : delegate.getTextLength();
        }

        @Override
        public int getTextOffset() throws IOException {
            return renamedKey() ? 0 : delegate.getTextOffset();
        }

        @Override
        public String getValueAsString() throws IOException {
            return renamedKey() ? currentName() : delegate.getValueAsString();
        }

        @Override
        public String getValueAsString(String defaultValue) throws IOException {
            return renamedKey() ? currentName() : delegate.getValueAsString(defaultValue);
        }
    }

    /** Spark's JacksonParser, reading each record through a {@link Parser}. */
    static final class RowParser extends JacksonParser {
        private final Shape root;
        private final Container rows;

        RowParser(StructType schema, JSONOptions options, Seq<Filter> filters, Rules rules) {
            super(schema, options, true, filters);
            // A single variant column holds each record whole, keys as written.
            this.root = options.singleVariantColumn().isDefined() ? null : Shape.of(schema, rules);
            this.rows = new Container(root, true);
        }

        @Override
        public <T> scala.collection.Iterable<InternalRow> parse(T record,
                Function2<JsonFactory, T, JsonParser> createParser, Function1<T, UTF8String> recordLiteral) {
            if (root == null) {
                return super.parse(record, createParser, recordLiteral);
            }
            Function2<JsonFactory, T, JsonParser> matching =
                (factory, r) -> new Parser(createParser.apply(factory, r), root, rows);
            return super.parse(record, matching, recordLiteral);
        }
    }

    /** Spark's JSON reader factory (JsonPartitionReaderFactory.buildReader), with a {@link RowParser}. */
    static final class Readers extends JsonPartitionReaderFactory {
        private static final long serialVersionUID = 1L;
        private final Rules rules;

        Readers(JsonPartitionReaderFactory spark, Rules rules) {
            super(spark.sqlConf(), spark.broadcastedConf(), spark.dataSchema(), spark.readDataSchema(),
                spark.partitionSchema(), spark.options(), spark.filters());
            this.rules = rules;
        }

        @Override
        public PartitionReader<InternalRow> buildReader(PartitionedFile file) {
            String corrupt = options().columnNameOfCorruptRecord();
            List<StructField> fields = new ArrayList<>();
            for (StructField f : readDataSchema().fields()) {
                if (!f.name().equals(corrupt)) {
                    fields.add(f);
                }
            }
            JacksonParser parser = new RowParser(new StructType(fields.toArray(new StructField[0])), options(), filters(),
                rules);
            scala.collection.Iterator<InternalRow> rows = JsonDataSource$.MODULE$.apply(options())
                .readFile(broadcastedConf().value().value(), file, parser, readDataSchema());
            return new PartitionReaderWithPartitionValues(new PartitionReaderFromIterator<>(rows), readDataSchema(),
                partitionSchema(), file.partitionValues());
        }
    }
}
