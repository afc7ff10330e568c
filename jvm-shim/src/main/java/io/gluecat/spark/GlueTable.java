package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gluecat.spark.internal.GlueFileIndex;
import io.gluecat.spark.internal.GlueWrite;
import io.gluecat.spark.internal.Scans;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.NoSuchPartitionException;
import org.apache.spark.sql.catalyst.analysis.PartitionsAlreadyExistException;
import org.apache.spark.sql.connector.catalog.SupportsAtomicPartitionManagement;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TruncatableTable;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** A Glue table in Spark: reads and writes through Spark's file sources, partitions kept by the catalog. */
final class GlueTable implements SupportsRead, SupportsWrite, SupportsAtomicPartitionManagement, TruncatableTable {
    private final GlueCatalog catalog;
    private final Backend backend;
    private final TableInfo info;
    /** The partitions' values as of the table's load (if it checked this JVM's copy) or else of its first
     * existence check; dropped at its own commits. */
    private Set<String> identities;
    private final Checks checks;
    /** The warehouse version at which each running query (Spark's SQL execution id) first read this governed
     * table's objects: its later reads of the table (the other scans of a self-join or a union of the table,
     * which Spark resolves to this one instance) read that state too, so that no query sees part of a commit.
     * A query's reads come after the table's load, so a write's transaction, which starts at the load, never
     * starts after them. The last few queries are kept. */
    private final Map<String, Long> readAt = java.util.Collections.synchronizedMap(
        new java.util.LinkedHashMap<String, Long>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Long> eldest) {
                return size() > 32;
            }
        });

    /** Who reports a statement's missing or existing partitions: Spark (its own checks print a date partition as
     * days since the epoch), or this table, for ADD without IF NOT EXISTS and DROP without IF EXISTS (the session
     * extension hands those a table that checks itself and prints the values as written). */
    enum Checks { SPARK, ADD, DROP }

    GlueTable(GlueCatalog catalog, Backend backend, TableInfo info, Set<String> identities) {
        this(catalog, backend, info, identities, Checks.SPARK);
    }

    private GlueTable(GlueCatalog catalog, Backend backend, TableInfo info, Set<String> identities, Checks checks) {
        this.catalog = catalog;
        this.backend = backend;
        this.info = info;
        this.identities = identities;
        this.checks = checks;
    }

    Checks checks() {
        return checks;
    }

    GlueTable checking(Checks checks) {
        return new GlueTable(catalog, backend, info, identities, checks);
    }

    /** Partitions as Spark's PARTITIONS_ALREADY_EXIST / PARTITIONS_NOT_FOUND list them, values as written. */
    static String partitionList(List<Map<String, String>> specs) {
        List<String> out = new ArrayList<>();
        for (Map<String, String> spec : specs) {
            List<String> pairs = new ArrayList<>();
            spec.forEach((k, v) -> pairs.add("`" + k.replace("`", "``") + "` = " + v));
            out.add("PARTITION (" + String.join(", ", pairs) + ")");
        }
        return String.join(", ", out);
    }

    private List<Map<String, String>> specs(List<List<String>> values) {
        List<Map<String, String>> out = new ArrayList<>();
        for (List<String> v : values) {
            Map<String, String> spec = new java.util.LinkedHashMap<>();
            for (int i = 0; i < v.size(); i++) {
                spec.put(info.partitionSchema.fields()[i].name(), v.get(i));
            }
            out.add(spec);
        }
        return out;
    }

    private RuntimeException partitionsError(String errorClass, List<List<String>> values) {
        Map<String, String> params = Map.of("partitionList", partitionList(specs(values)),
            "tableName", catalog.quoted(info.ident));
        org.apache.spark.sql.AnalysisException e = errorClass.equals("PARTITIONS_ALREADY_EXIST")
            ? new PartitionsAlreadyExistException(errorClass, io.gluecat.spark.internal.Scala.map(params))
            : new org.apache.spark.sql.catalyst.analysis.NoSuchPartitionsException(errorClass,
                io.gluecat.spark.internal.Scala.map(params));
        return Backend.<RuntimeException>unchecked(e);
    }

    private boolean exists(List<String> values) {
        if (info.governed) {  // its partitions are those its objects are in
            List<Filter> filters = new ArrayList<>();
            for (int i = 0; i < values.size(); i++) {
                if (!values.get(i).equals(Partitions.NULL_VALUE)) {
                    filters.add(new EqualTo(info.partitionSchema.fields()[i].name(), values.get(i)));
                }
            }
            return selectObjects(filters.toArray(new Filter[0])).stream()
                .anyMatch(s -> Partitions.values(info.partitionSchema, s.values()).equals(values));
        }
        if (identities == null) {
            identities = Identities.current(backend, backend.key(), args());
        }
        return identities.contains(Identities.key(values));
    }

    /** The position of a partition column, its name matched without regard to case; -1 if none. */
    int partitionIndex(String name) {
        StructField[] fields = info.partitionSchema.fields();
        for (int i = 0; i < fields.length; i++) {
            if (fields[i].name().equalsIgnoreCase(name)) {
                return i;
            }
        }
        return -1;
    }

    /** The full specs (values as Glue keeps them) of the partitions matching a spec of some partition columns. */
    List<Map<String, String>> matching(Map<String, String> partial) {
        List<Filter> filters = new ArrayList<>();
        Map<Integer, String> wanted = new java.util.HashMap<>();
        for (Map.Entry<String, String> e : partial.entrySet()) {
            int i = partitionIndex(e.getKey());
            StructType one = new StructType(new StructField[] {info.partitionSchema.fields()[i]});
            String value = e.getValue() == null ? Partitions.NULL_VALUE
                : Partitions.values(one, Partitions.row(one, List.of(e.getValue()))).get(0);  // as Glue writes it
            wanted.put(i, value);
            if (!value.equals(Partitions.NULL_VALUE)) {
                filters.add(new EqualTo(info.partitionSchema.fields()[i].name(), value));
            }
        }
        List<Map<String, String>> out = new ArrayList<>();
        for (GlueFileIndex.Selected s : partitions(filters.toArray(new Filter[0]))) {
            List<String> values = Partitions.values(info.partitionSchema, s.values());
            boolean match = wanted.entrySet().stream().allMatch(w -> values.get(w.getKey()).equals(w.getValue()));
            if (match) {
                Map<String, String> spec = specs(List.of(values)).get(0);
                spec.replaceAll((k, v) -> v.equals(Partitions.NULL_VALUE) ? null : v);  // as Spark writes a null value
                out.add(spec);
            }
        }
        return out;
    }

    TableInfo info() {
        return info;
    }

    @Override
    public String name() {
        return catalog.name() + "." + info.ident;
    }

    @Override
    public StructType schema() {
        return info.schema();
    }

    @Override
    public Transform[] partitioning() {
        return info.partitioning();
    }

    @Override
    public Map<String, String> properties() {
        return info.properties;
    }

    @Override
    public Set<TableCapability> capabilities() {
        return EnumSet.of(TableCapability.BATCH_READ, TableCapability.BATCH_WRITE, TableCapability.OVERWRITE_BY_FILTER,
            TableCapability.OVERWRITE_DYNAMIC, TableCapability.TRUNCATE);
    }

    private ObjectNode args() {
        return Backend.table(info.ident.namespace()[0], info.ident.name());
    }

    /** The arguments of a call that changes the table's data, whose statistics it outdates: with
     * spark.sql.statistics.size.autoUpdate.enabled, the backend records the new size, as Spark's catalog does. */
    private ObjectNode dataChangeArgs() {
        scala.Option<SparkSession> spark = SparkSession.getActiveSession();
        boolean auto = spark.isDefined() && "true".equalsIgnoreCase(
            spark.get().conf().get("spark.sql.statistics.size.autoUpdate.enabled", "false"));
        return args().put("size_auto_update", auto);
    }

    private String readableFormat() {
        if (info.unreadable != null) {
            throw new UnsupportedOperationException("gluecat: " + info.unreadable);
        }
        return info.format;
    }

    // -- reads --------------------------------------------------------------------------------------

    List<GlueFileIndex.Selected> select(Filter[] filters) {
        ObjectNode a = args();
        if (info.asOf != null) {
            a.put("as_of", info.asOf);
        }
        a.set("filters", Partitions.filters(filters));
        JsonNode answer = backend.call("list_partitions", a);
        List<InternalRow> rows = Partitions.rows(info.partitionSchema, answer);
        List<GlueFileIndex.Selected> out = new ArrayList<>(rows.size());
        JsonNode locations = answer.get("locations");
        for (int i = 0; i < rows.size(); i++) {
            out.add(new GlueFileIndex.Selected(rows.get(i), locations.get(i).asText()));
        }
        return out;
    }

    /** The partitions matching the filters: the catalog's, or for a governed table those its objects are in. */
    private List<GlueFileIndex.Selected> partitions(Filter[] filters) {
        return info.governed ? selectObjects(filters) : select(filters);
    }

    private JsonNode listObjects(ObjectNode a) {
        try {
            return backend.call("list_objects", a);
        } catch (Backend.GlueError e) {
            throw e.toSpark();
        }
    }

    /** A governed table's objects in the partitions matching the filters, grouped by partition (the catalog answers
     * them in partition order). */
    List<GlueFileIndex.Selected> selectObjects(Filter[] filters) {
        ObjectNode a = args();
        if (info.asOf != null) {
            a.put("as_of", info.asOf);
        }
        if (info.transaction != null) {
            a.put("transaction", info.transaction);
        }
        String query = info.asOf == null && info.transaction == null
            ? SparkSession.active().sparkContext().getLocalProperty("spark.sql.execution.id") : null;
        Long pinned = query == null ? null : readAt.get(query);
        if (pinned != null) {
            a.put("version", pinned);
        }
        a.set("filters", Partitions.filters(filters));
        JsonNode answer = listObjects(a);
        if (query != null && pinned == null && answer.hasNonNull("version")) {
            long read = answer.get("version").asLong();
            Long first = readAt.putIfAbsent(query, read);
            if (first != null && first != read) {  // another scan of the query read first: read its state
                answer = listObjects(a.put("version", first));
            }
        }
        JsonNode columns = answer.get("values");
        JsonNode uris = answer.get("uris");
        JsonNode sizes = answer.get("sizes");
        List<GlueFileIndex.Selected> out = new ArrayList<>();
        List<String> previous = null;
        List<org.apache.hadoop.fs.FileStatus> files = null;
        for (int r = 0; r < uris.size(); r++) {
            List<String> values = new ArrayList<>();
            for (JsonNode column : columns) {
                values.add(column.get(r).asText());
            }
            if (!values.equals(previous)) {
                files = new ArrayList<>();
                out.add(new GlueFileIndex.Selected(Partitions.row(info.partitionSchema, values), null, files));
                previous = values;
            }
            org.apache.hadoop.fs.Path path = new org.apache.hadoop.fs.Path(uris.get(r).asText());
            files.add(new org.apache.hadoop.fs.FileStatus(sizes.get(r).asLong(), false, 1, OBJECT_BLOCK_SIZE, 0L, path));
        }
        return out;
    }

    /** The block size a governed table's objects are said to have (locality only: splits follow Spark's settings). */
    private static final long OBJECT_BLOCK_SIZE = 128L << 20;

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
        String format = readableFormat();
        Map<String, String> merged = new HashMap<>(info.readOptions);
        merged.putAll(options);
        SparkSession spark = SparkSession.active();
        GlueFileIndex index = info.governed
            ? new GlueFileIndex(spark, info.location, info.partitionSchema, this::selectObjects, merged, true)
            : new GlueFileIndex(spark, info.location, info.partitionSchema, this::select, merged);
        return Scans.builder(spark, index, info.schema(), info.dataSchema, format, new CaseInsensitiveStringMap(merged),
            info.statistics);
    }

    // -- writes -------------------------------------------------------------------------------------

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo write) {
        if (info.asOf != null) {
            throw new UnsupportedOperationException("gluecat: a table read as of " + info.asOf + " cannot be written");
        }
        if (info.transaction != null) {
            throw new UnsupportedOperationException("gluecat: a table read as of transaction " + info.transaction
                + " cannot be written");
        }
        return writeBuilder(info, write, new WriteTarget());
    }

    /** A write of the table's files in its format, with its SerDe options under the write's own, to {@code target}
     * (a GlueTable's, or a StagedGlueTable's staging folder). */
    static WriteBuilder writeBuilder(TableInfo info, LogicalWriteInfo write, GlueWrite.Target target) {
        if (info.unreadable != null) {
            throw new UnsupportedOperationException("gluecat: " + info.unreadable);
        }
        Map<String, String> merged = new HashMap<>(info.readOptions);
        merged.putAll(write.options());
        return GlueWrite.builder(SparkSession.active(), write, info.format, info.location, info.partitionNames(),
            merged, target);
    }

    /**
     * The partitions (their values as the catalog stores them) that an overwrite's filters match, by Spark's
     * semantics: the catalog's selection, made as for a read (which may hold more partitions than the
     * filters match: double and boolean keys, null tests), is narrowed by the filters evaluated on each
     * partition's typed values. Refused (nothing is written or deleted) for a filter that cannot be evaluated.
     */
    private List<List<String>> overwritten(Filter[] filters) {
        if (info.partitionSchema.isEmpty()) {
            return List.of();
        }
        org.apache.spark.sql.catalyst.expressions.Expression matches;
        try {
            matches = Partitions.predicate(info.partitionSchema, filters);
        } catch (UnsupportedOperationException e) {
            throw new UnsupportedOperationException(e.getMessage() + ": nothing was overwritten", e);
        }
        ObjectNode a = args();
        a.set("filters", Partitions.filters(filters));
        JsonNode answer;
        try {
            answer = backend.call(info.governed ? "list_objects" : "list_partitions", a);
        } catch (Backend.GlueError e) {
            throw e.toSpark();
        }
        JsonNode columns = answer.get("values");
        int n = answer.get(info.governed ? "uris" : "locations").size();
        java.util.LinkedHashSet<List<String>> out = new java.util.LinkedHashSet<>();
        for (int r = 0; r < n; r++) {
            List<String> values = new ArrayList<>();
            for (JsonNode column : columns) {
                values.add(column.get(r).asText());
            }
            if (!out.contains(values)
                    && Boolean.TRUE.equals(matches.eval(Partitions.row(info.partitionSchema, values)))) {
                out.add(values);
            }
        }
        return new ArrayList<>(out);
    }

    /** The catalog's side of a write: Python stages, moves and deletes the files, and registers partitions. */
    private final class WriteTarget implements GlueWrite.Target {
        @Override
        public String begin() {
            ObjectNode a = args();
            String timeout = catalog.option("transaction-timeout");
            if (timeout != null) {
                a.put("transaction_timeout", Double.parseDouble(timeout));
            }
            if (info.loadedVersion != null) {
                a.put("loaded_version", info.loadedVersion);  // before the query's reads: see GovernedWrites.begin
            }
            try {
                return backend.call("begin_write", a).get("staging").asText();
            } catch (Backend.GlueError e) {
                throw e.toSpark();
            }
        }

        @Override
        public void commit(String staging, GlueWrite.Mode mode, Filter[] filters, List<String> fragments,
                List<List<String>> values) {
            ObjectNode a = dataChangeArgs().put("staging", staging).put("mode", mode.name());
            if (mode == GlueWrite.Mode.OVERWRITE_BY_FILTER) {
                ArrayNode replaced = a.putArray("overwrite");
                overwritten(filters).forEach(v -> replaced.add(Partitions.json(v)));
            }
            ArrayNode w = a.putArray("written");
            for (int i = 0; i < fragments.size(); i++) {
                ObjectNode one = w.addObject().put("fragment", fragments.get(i));
                one.set("values", Partitions.json(values.get(i)));
            }
            try {
                backend.call("commit_write", a);
            } catch (Backend.GlueError e) {
                throw e.toSpark();
            }
        }

        @Override
        public void abort(String staging) {
            backend.call("abort_write", args().put("staging", staging));
        }
    }

    @Override
    public boolean truncateTable() {
        try {
            backend.call("truncate", dataChangeArgs());
        } catch (Backend.GlueError e) {
            throw e.toSpark("tableName", catalog.quoted(info.ident));  // CANNOT_TRUNCATE_EXTERNAL_TABLE
        }
        return true;
    }

    // -- partitions ---------------------------------------------------------------------------------

    @Override
    public StructType partitionSchema() {
        return info.partitionSchema;
    }

    private List<List<String>> values(InternalRow[] idents) {
        List<List<String>> out = new ArrayList<>();
        for (InternalRow row : idents) {
            out.add(Partitions.values(info.partitionSchema, row));
        }
        return out;
    }

    private static ArrayNode json(List<List<String>> values) {
        ArrayNode out = Backend.JSON.createArrayNode();
        for (List<String> v : values) {
            out.add(Partitions.json(v));
        }
        return out;
    }

    /** Spark asks once per partition of a statement: answered from the JVM's copy of the table's partitions. */
    @Override
    public boolean partitionExists(InternalRow ident) {
        if (checks == Checks.ADD) {
            return false;  // createPartitions checks, and reports the existing ones by their values
        }
        if (checks == Checks.DROP) {
            return true;  // dropPartitions checks, and reports the missing ones by their values
        }
        return exists(Partitions.values(info.partitionSchema, ident));
    }

    private void committed(JsonNode answer, List<List<String>> added, List<List<String>> dropped) {
        Identities.committed(backend.key(), args(), answer.get("version").asLong(), added, dropped);
        identities = null;
    }

    @Override
    public void createPartitions(InternalRow[] idents, Map<String, String>[] properties)
            throws PartitionsAlreadyExistException {
        List<List<String>> values = values(idents);
        if (checks == Checks.ADD) {
            List<List<String>> existing = values.stream().filter(this::exists).toList();
            if (!existing.isEmpty()) {
                throw partitionsError("PARTITIONS_ALREADY_EXIST", existing);
            }
        }
        ObjectNode a = dataChangeArgs();
        a.set("partitions", json(values));
        ArrayNode props = a.putArray("properties");
        for (Map<String, String> p : properties) {
            ObjectNode o = props.addObject();
            p.forEach(o::put);
        }
        try {
            committed(backend.call("create_partitions", a), values, List.of());
        } catch (Backend.GlueError e) {
            if (e.is("AlreadyExistsException")) {
                throw new PartitionsAlreadyExistException(name(), scala.jdk.javaapi.CollectionConverters.asScala(
                    java.util.Arrays.asList(idents)).toList(), info.partitionSchema);
            }
            throw e;
        }
    }

    private void checkDropped(List<List<String>> values) {
        if (checks == Checks.DROP) {
            List<List<String>> missing = values.stream().filter(v -> !exists(v)).toList();
            if (!missing.isEmpty()) {
                throw partitionsError("PARTITIONS_NOT_FOUND", missing);
            }
        }
    }

    @Override
    public boolean dropPartitions(InternalRow[] idents) {
        List<List<String>> values = values(idents);
        checkDropped(values);
        ObjectNode a = dataChangeArgs();
        a.set("partitions", json(values));
        try {
            committed(backend.call("drop_partitions", a), List.of(), values);
            return true;
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public boolean purgePartitions(InternalRow[] idents) {
        List<List<String>> values = values(idents);
        checkDropped(values);
        ObjectNode a = dataChangeArgs().put("purge", true);
        a.set("partitions", json(values));
        committed(backend.call("drop_partitions", a), List.of(), values);
        return true;
    }

    @Override
    public boolean purgePartition(InternalRow ident) {
        return purgePartitions(new InternalRow[] {ident});
    }

    @Override
    public boolean truncatePartitions(InternalRow[] idents) throws NoSuchPartitionException {
        ObjectNode a = dataChangeArgs();
        a.set("partitions", json(values(idents)));
        try {
            backend.call("truncate", a);
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchPartitionException(name(), idents[0], info.partitionSchema);
            }
            throw e.toSpark("tableName", catalog.quoted(info.ident));
        }
        return true;
    }

    /** PARTITION (...) RENAME TO PARTITION (...): one commit; a managed table's partition folder at its Hive path
     * moves to the new values' path (as Hive moves it). */
    @Override
    public boolean renamePartition(InternalRow from, InternalRow to) {
        List<String> old = Partitions.values(info.partitionSchema, from);
        List<String> renamed = Partitions.values(info.partitionSchema, to);
        if (!exists(old)) {
            throw partitionsError("PARTITIONS_NOT_FOUND", List.of(old));
        }
        if (exists(renamed)) {
            throw partitionsError("PARTITIONS_ALREADY_EXIST", List.of(renamed));
        }
        ObjectNode a = args();
        a.set("values", Partitions.json(old));
        a.set("new_values", Partitions.json(renamed));
        try {
            committed(backend.call("rename_partition", a), List.of(renamed), List.of(old));
        } catch (Backend.GlueError e) {
            throw e.toSpark();
        }
        return true;
    }

    @Override
    public void replacePartitionMetadata(InternalRow ident, Map<String, String> properties) {
        throw new UnsupportedOperationException("gluecat: replacing partition metadata is not supported");
    }

    @Override
    public Map<String, String> loadPartitionMetadata(InternalRow ident) {
        ObjectNode a = args();
        a.set("values", Partitions.json(Partitions.values(info.partitionSchema, ident)));
        return TableInfo.strings(backend.call("get_partition", a));
    }

    @Override
    public boolean truncatePartition(InternalRow ident) throws NoSuchPartitionException {
        return truncatePartitions(new InternalRow[] {ident});
    }

    @Override
    public InternalRow[] listPartitionIdentifiers(String[] names, InternalRow ident) {
        int[] fields = new int[names.length];
        List<String> wanted = new ArrayList<>();
        List<Filter> filters = new ArrayList<>();
        for (int i = 0; i < names.length; i++) {
            fields[i] = info.partitionSchema.fieldIndex(names[i]);
            StructType one = new StructType(new StructField[] {info.partitionSchema.fields()[fields[i]]});
            InternalRow value = new GenericInternalRow(new Object[] {ident.get(i, one.fields()[0].dataType())});
            String text = Partitions.values(one, value).get(0);
            wanted.add(text);
            if (!text.equals(Partitions.NULL_VALUE)) {
                filters.add(new EqualTo(names[i], text));
            }
        }
        List<InternalRow> out = new ArrayList<>();
        for (GlueFileIndex.Selected s : partitions(filters.toArray(new Filter[0]))) {
            List<String> values = Partitions.values(info.partitionSchema, s.values());
            boolean match = true;
            for (int i = 0; i < fields.length && match; i++) {
                match = values.get(fields[i]).equals(wanted.get(i));
            }
            if (match) {
                out.add(s.values());
            }
        }
        return out.toArray(new InternalRow[0]);
    }
}
