package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gluecat.spark.internal.Scans;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.ProcedureCatalog;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.TableSummary;
import org.apache.spark.sql.connector.catalog.View;
import org.apache.spark.sql.connector.catalog.RelationCatalog;
import org.apache.spark.sql.connector.catalog.Relation;
import org.apache.spark.sql.catalyst.analysis.NoSuchViewException;
import org.apache.spark.sql.catalyst.analysis.ViewAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.expressions.IdentityTransform;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Spark catalog plugin over a gluecat warehouse: a pure adapter, all catalog logic lives in Python.
 *
 * <p>Options (spark.sql.catalog.&lt;name&gt;.*): {@code warehouse} the gluecat warehouse path or URI, opened by this
 * application; or {@code endpoint} the URL of a catalog service's Glue API (gluecat serve, any Glue; AWS Glue itself
 * by {@code region} alone), with {@code region} and {@code profile} chosen and credentials and CA bundle found as
 * boto3 finds them, and {@code warehouse} then where tables made without a location go (by default gluecat serve's);
 * {@code python} the interpreter a JVM-only process starts for the catalog;
 * {@code transaction-timeout} the idle timeout in seconds of the transactions that writes to governed tables run
 * in (default 900; a running job keeps its transaction alive).
 * Glue's errors become Spark's own exceptions here; any other gluecat error keeps its Glue code and message.
 */
public class GlueCatalog implements RelationCatalog, SupportsNamespaces, ProcedureCatalog, StagingTableCatalog {
    private String name;
    private Backend backend;
    private CaseInsensitiveStringMap options;

    @Override
    public void initialize(String name, CaseInsensitiveStringMap options) {
        Scans.checkVersion(org.apache.spark.package$.MODULE$.SPARK_VERSION());
        this.name = name;
        this.options = options;
        if (options.get("warehouse") == null && options.get("endpoint") == null && options.get("region") == null
                && options.get("profile") == null) {
            throw new IllegalArgumentException("spark.sql.catalog." + name + ".warehouse (a gluecat warehouse) or "
                + "spark.sql.catalog." + name + ".endpoint (a catalog service's Glue API) is required");
        }
        this.backend = new Backend(name, options);
        shareS3Settings();
    }

    /** Spark's S3A settings, so that the Python side reaches the tables' files on S3 as Spark does
     * (gluecat.s3_access): the {@code fs.s3a.*} Hadoop settings, and the keys Hadoop's credential providers
     * hold. Read when the catalog starts. */
    private void shareS3Settings() {
        scala.Option<org.apache.spark.sql.SparkSession> active = org.apache.spark.sql.SparkSession.getActiveSession();
        scala.Option<org.apache.spark.sql.SparkSession> spark =
            active.isDefined() ? active : org.apache.spark.sql.SparkSession.getDefaultSession();
        if (spark.isEmpty()) {
            return;
        }
        org.apache.hadoop.conf.Configuration conf = spark.get().sessionState().newHadoopConf();
        ObjectNode s3a = Backend.args();
        conf.getPropsWithPrefix("fs.s3a.").forEach(s3a::put);
        for (String secret : List.of("access.key", "secret.key", "session.token")) {
            try {
                char[] value = conf.getPassword("fs.s3a." + secret);
                if (value != null) {
                    s3a.put(secret, new String(value));
                }
            } catch (java.io.IOException e) {
                throw new IllegalStateException("gluecat: cannot read fs.s3a." + secret + " from Hadoop's "
                    + "credential providers: " + e.getMessage(), e);
            }
        }
        backend.call("use_hadoop_settings", Backend.args().set("s3a", s3a));
    }

    @Override
    public String name() {
        return name;
    }

    /** The key of the Python catalog behind this one, under which {@link Registry} holds it. */
    public String pythonCatalogKey() {
        return backend.key();
    }

    /** One of the catalog's options (spark.sql.catalog.&lt;name&gt;.&lt;key&gt;), or null. */
    String option(String key) {
        return options.get(key);
    }

    private static String database(String[] namespace) throws NoSuchNamespaceException {
        if (namespace.length != 1) {
            throw new NoSuchNamespaceException(namespace);
        }
        return namespace[0];
    }

    /** A call about one namespace: a missing database is Spark's NoSuchNamespaceException. */
    private JsonNode inNamespace(String op, ObjectNode args, String[] namespace) throws NoSuchNamespaceException {
        try {
            return backend.call(op, args);
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchNamespaceException(namespace);
            }
            throw e.toSpark();
        }
    }

    // -- namespaces ---------------------------------------------------------------------------------

    @Override
    public String[][] listNamespaces() {
        JsonNode names = backend.call("list_databases", Backend.args());
        String[][] out = new String[names.size()][];
        for (int i = 0; i < names.size(); i++) {
            out[i] = new String[] {names.get(i).asText()};
        }
        return out;
    }

    @Override
    public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
        if (namespace.length == 0) {
            return listNamespaces();
        }
        loadNamespaceMetadata(namespace);
        return new String[0][];
    }

    @Override
    public Map<String, String> loadNamespaceMetadata(String[] namespace) throws NoSuchNamespaceException {
        if (Procedures.isSystem(namespace)) {
            return new HashMap<>();  // where the procedures live; Spark resolves it before CALL
        }
        ObjectNode args = Backend.args().put("name", database(namespace));
        return TableInfo.strings(inNamespace("get_database", args, namespace));
    }

    @Override
    public void createNamespace(String[] namespace, Map<String, String> metadata)
            throws NamespaceAlreadyExistsException {
        ObjectNode args = Backend.args();
        args.put("name", String.join(".", namespace));
        args.set("properties", Backend.JSON.valueToTree(metadata));
        try {
            backend.call("create_database", args);
        } catch (Backend.GlueError e) {
            if (e.is("AlreadyExistsException")) {
                throw new NamespaceAlreadyExistsException(namespace);
            }
            throw e.toSpark();
        }
    }

    @Override
    public void alterNamespace(String[] namespace, NamespaceChange... changes) throws NoSuchNamespaceException {
        ObjectNode args = Backend.args().put("name", database(namespace));
        ObjectNode set = args.putObject("set");
        List<String> remove = new ArrayList<>();
        for (NamespaceChange change : changes) {
            if (change instanceof NamespaceChange.SetProperty s) {
                set.put(s.property(), s.value());
            } else if (change instanceof NamespaceChange.RemoveProperty r) {
                remove.add(r.property());
            }
        }
        args.set("remove", Backend.JSON.valueToTree(remove));
        inNamespace("alter_database", args, namespace);
    }

    @Override
    public boolean dropNamespace(String[] namespace, boolean cascade)
            throws NoSuchNamespaceException, NonEmptyNamespaceException {
        ObjectNode args = Backend.args().put("name", database(namespace)).put("cascade", cascade);
        try {
            return inNamespace("drop_database", args, namespace).asBoolean();
        } catch (Backend.GlueError e) {
            if (e.isSpark("SCHEMA_NOT_EMPTY")) {
                throw new NonEmptyNamespaceException(namespace);  // Spark's DROP NAMESPACE says SCHEMA_NOT_EMPTY
            }
            throw e;
        }
    }

    /** A name as Spark quotes it in messages, this catalog's name first: `glue`.`db`.`t`. */
    String quoted(Identifier ident) {
        StringBuilder out = new StringBuilder(quote(name));
        for (String part : ident.namespace()) {
            out.append('.').append(quote(part));
        }
        return out.append('.').append(quote(ident.name())).toString();
    }

    private static String quote(String part) {
        return "`" + part.replace("`", "``") + "`";
    }

    // -- tables -------------------------------------------------------------------------------------

    /** The namespace's tables and views, each with its kind: MANAGED, EXTERNAL or VIEW. */
    private List<TableSummary> summaries(String[] namespace) throws NoSuchNamespaceException {
        JsonNode listed = inNamespace("list_tables", Backend.args().put("name", database(namespace)), namespace);
        List<TableSummary> out = new ArrayList<>();
        for (JsonNode t : listed) {
            out.add(TableSummary.of(Identifier.of(namespace, t.get(0).asText()), t.get(1).asText()));
        }
        return out;
    }

    /** Tables only: the views are listViews' (TableCatalog's contract for a catalog that has views). */
    @Override
    public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
        return summaries(namespace).stream().filter(t -> !t.tableType().equals(TableSummary.VIEW_TABLE_TYPE))
            .map(TableSummary::identifier).toArray(Identifier[]::new);
    }

    @Override
    public TableSummary[] listTableSummaries(String[] namespace) throws NoSuchNamespaceException {
        return summaries(namespace).stream().filter(t -> !t.tableType().equals(TableSummary.VIEW_TABLE_TYPE))
            .toArray(TableSummary[]::new);
    }

    // -- views --------------------------------------------------------------------------------------

    @Override
    public Identifier[] listViews(String[] namespace) throws NoSuchNamespaceException {
        return summaries(namespace).stream().filter(t -> t.tableType().equals(TableSummary.VIEW_TABLE_TYPE))
            .map(TableSummary::identifier).toArray(Identifier[]::new);
    }

    @Override
    public View loadView(Identifier ident) throws NoSuchViewException {
        if (ident.namespace().length != 1) {
            throw new NoSuchViewException(ident);
        }
        try {
            return view(ident, backend.call("get_view", Backend.table(ident.namespace()[0], ident.name())));
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchViewException(ident);
            }
            throw e.toSpark();
        }
    }

    private static View view(Identifier ident, JsonNode v) {
        List<String> namespace = new ArrayList<>();
        v.get("current_namespace").forEach(n -> namespace.add(n.asText()));
        List<String> columns = new ArrayList<>();
        v.get("query_column_names").forEach(n -> columns.add(n.asText()));
        Map<String, String> configs = TableInfo.strings(v.get("sql_configs"));
        View.Builder builder = new View.Builder()
            .withQueryText(v.get("query").asText())
            .withCurrentCatalog(v.get("current_catalog").isNull() ? null : v.get("current_catalog").asText())
            .withCurrentNamespace(namespace.toArray(new String[0]))
            .withSqlConfigs(configs)
            .withQueryColumnNames(columns.toArray(new String[0]));
        if (!v.get("schema_mode").isNull()) {
            builder = builder.withSchemaMode(v.get("schema_mode").asText());
        }
        builder.withSchema(TableInfo.schema(v.get("columns"), ident)).withProperties(TableInfo.strings(v.get("properties")));
        return builder.build();
    }

    private void putView(Identifier ident, View view, boolean replace) {
        io.gluecat.spark.internal.Views.refuseTemporaryReferences(
            List.of(name, database(ident), ident.name()), view.queryText());
        ObjectNode args = Backend.table(database(ident), ident.name()).put("replace", replace);
        ObjectNode v = args.putObject("view");
        v.put("query", view.queryText());
        v.put("current_catalog", view.currentCatalog());
        ArrayNode ns = v.putArray("current_namespace");
        for (String part : view.currentNamespace() == null ? new String[0] : view.currentNamespace()) {
            ns.add(part);
        }
        v.set("sql_configs", Backend.JSON.valueToTree(view.sqlConfigs() == null ? Map.of() : view.sqlConfigs()));
        v.put("schema_mode", view.schemaMode());
        ArrayNode out = v.putArray("query_column_names");
        for (String c : view.queryColumnNames() == null ? new String[0] : view.queryColumnNames()) {
            out.add(c);
        }
        ArrayNode cols = v.putArray("columns");
        for (StructField f : view.schema().fields()) {
            cols.add(column(f));
        }
        v.set("properties", Backend.JSON.valueToTree(view.properties() == null ? Map.of() : view.properties()));
        backend.call("create_view", args);
    }

    private static String database(Identifier ident) {
        if (ident.namespace().length != 1) {
            throw new IllegalArgumentException("gluecat: " + ident + " is not db.name");
        }
        return ident.namespace()[0];
    }

    @Override
    public View createView(Identifier ident, View view) throws ViewAlreadyExistsException, NoSuchNamespaceException {
        try {
            putView(ident, view, false);
        } catch (Backend.GlueError e) {
            if (e.is("AlreadyExistsException")) {
                throw new ViewAlreadyExistsException(ident);
            }
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchNamespaceException(ident.namespace());
            }
            throw e.toSpark();
        }
        return view;
    }

    @Override
    public View replaceView(Identifier ident, View view) throws NoSuchViewException {
        try {
            putView(ident, view, true);
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchViewException(ident);
            }
            throw e.toSpark();
        }
        return view;
    }

    @Override
    public boolean dropView(Identifier ident) {
        if (ident.namespace().length != 1) {
            return false;
        }
        try {
            return backend.call("drop_view", Backend.table(ident.namespace()[0], ident.name())).asBoolean();
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                return false;
            }
            throw e.toSpark();
        }
    }

    @Override
    public void renameView(Identifier oldIdent, Identifier newIdent)
            throws NoSuchViewException, ViewAlreadyExistsException {
        ObjectNode args = Backend.table(database(oldIdent), oldIdent.name());
        args.put("new_database", newIdent.namespace().length == 0 ? database(oldIdent) : database(newIdent))
            .put("new_name", newIdent.name());
        try {
            backend.call("rename_view", args);
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchViewException(oldIdent);
            }
            if (e.is("AlreadyExistsException")) {
                throw new ViewAlreadyExistsException(newIdent);
            }
            throw e.toSpark();
        }
    }

    @Override
    public Table loadTable(Identifier ident) throws NoSuchTableException {
        return load(ident, null, null);
    }

    /** VERSION AS OF: a Glue table version (its VersionId). */
    @Override
    public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
        return load(ident, version, null);
    }

    /** TIMESTAMP AS OF: the table and its partitions as they were at that time. */
    @Override
    public Table loadTable(Identifier ident, long timestampMicros) throws NoSuchTableException {
        java.time.Instant at = java.time.Instant.ofEpochSecond(Math.floorDiv(timestampMicros, 1_000_000L),
            Math.floorMod(timestampMicros, 1_000_000L) * 1000L);
        return load(ident, null, at.toString());
    }

    /** A table or a view, in one call: how Spark resolves a name in a catalog that has both. */
    @Override
    public Relation loadRelation(Identifier ident) throws NoSuchTableException {
        return load(ident, null, null, true);
    }

    private Table load(Identifier ident, String version, String asOf) throws NoSuchTableException {
        return (Table) load(ident, version, asOf, false);
    }

    private Relation load(Identifier ident, String version, String asOf, boolean orView) throws NoSuchTableException {
        if (ident.namespace().length != 1) {
            throw new NoSuchTableException(ident);
        }
        ObjectNode args = Backend.table(ident.namespace()[0], ident.name());
        if (orView) {
            args.put("or_view", true);
        }
        if (version != null) {
            args.put("version", version);
        }
        if (asOf != null) {
            args.put("as_of", asOf);
        }
        Identities.Asked asked = version == null && asOf == null ? Identities.ask(backend.key(), args) : null;
        try {
            JsonNode t = backend.call("get_table", args);
            if (t.has("view")) {
                return view(ident, t.get("view"));
            }
            return new GlueTable(this, backend, new TableInfo(ident, t), asked == null ? null : asked.answer(t));
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchTableException(ident);
            }
            throw e.toSpark();
        }
    }

    @Override
    public Table createTable(Identifier ident, StructType schema, Transform[] partitions,
            Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
        return created(ident, "create_table", tableArgs(ident, schema, partitions, properties));
    }

    /** The create_table arguments of a table: its columns, partition keys and properties. Glue keeps the columns,
     * then the partition keys, and the table reads back in that order, as in Spark's built-in catalog. */
    private ObjectNode tableArgs(Identifier ident, StructType schema, Transform[] partitions,
            Map<String, String> properties) throws NoSuchNamespaceException {
        List<String> partitionNames = new ArrayList<>();
        for (Transform t : partitions) {
            if (!(t instanceof IdentityTransform) || t.references().length != 1
                    || t.references()[0].fieldNames().length != 1) {
                throw new IllegalArgumentException("gluecat: Glue tables are partitioned by columns only, not by "
                    + t.describe());
            }
            partitionNames.add(t.references()[0].fieldNames()[0]);
        }
        ObjectNode args = Backend.table(database(ident.namespace()), ident.name());
        ArrayNode columns = args.putArray("columns");
        ArrayNode keys = args.putArray("partition_keys");
        Map<String, StructField> byName = new HashMap<>();
        for (StructField f : schema.fields()) {
            byName.put(f.name().toLowerCase(java.util.Locale.ROOT), f);
            if (partitionNames.stream().noneMatch(f.name()::equalsIgnoreCase)) {
                columns.add(column(f));
            }
        }
        for (String p : partitionNames) {
            StructField f = byName.get(p.toLowerCase(java.util.Locale.ROOT));
            if (f == null) {
                throw new IllegalArgumentException("gluecat: partition column " + p + " is not a column of the table");
            }
            keys.add(column(f));
        }
        args.set("properties", Backend.JSON.valueToTree(properties));
        return args;
    }

    // -- CTAS and REPLACE TABLE: staged, so that the old table stays until the new rows are written ------------

    @Override
    public StagedTable stageCreate(Identifier ident, Column[] columns, Transform[] partitions,
            Map<String, String> properties) throws TableAlreadyExistsException, NoSuchNamespaceException {
        return staged(ident, columns, partitions, properties, "create");
    }

    @Override
    public StagedTable stageReplace(Identifier ident, Column[] columns, Transform[] partitions,
            Map<String, String> properties) throws NoSuchNamespaceException, NoSuchTableException {
        return staged(ident, columns, partitions, properties, "replace");
    }

    @Override
    public StagedTable stageCreateOrReplace(Identifier ident, Column[] columns, Transform[] partitions,
            Map<String, String> properties) throws NoSuchNamespaceException {
        return staged(ident, columns, partitions, properties, "create_or_replace");
    }

    private StagedTable staged(Identifier ident, Column[] columns, Transform[] partitions,
            Map<String, String> properties, String stage) throws NoSuchNamespaceException {
        StructType declared = schemaOf(columns);
        ObjectNode args = tableArgs(ident, declared, partitions, properties).put("stage", stage);
        JsonNode answer;
        try {
            answer = backend.call("stage_table", args);
        } catch (Backend.GlueError e) {
            if (e.is("AlreadyExistsException")) {
                throw Backend.<RuntimeException>unchecked(new TableAlreadyExistsException(ident.toString()));
            }
            if (e.is("EntityNotFoundException")) {
                if (stage.equals("replace") && namespaceExists(ident.namespace())) {
                    throw Backend.<RuntimeException>unchecked(new NoSuchTableException(ident));
                }
                throw new NoSuchNamespaceException(ident.namespace());
            }
            throw e.toSpark("identifier", quoted(ident));
        }
        if (answer.path("immediate").asBoolean(false)) {
            try {
                if (!stage.equals("create")) {
                    dropTable(ident);
                }
                return new StagedGlueTable.Immediate(this, createTable(ident, columns, partitions, properties),
                    declared);
            } catch (TableAlreadyExistsException e) {
                throw Backend.<RuntimeException>unchecked(e);
            }
        }
        return new StagedGlueTable(this, backend, new TableInfo(ident, answer), args, answer, declared);
    }

    /** The columns as fields, each DEFAULT in the field's metadata as Spark keeps it. */
    private static StructType schemaOf(Column[] columns) {
        return org.apache.spark.sql.connector.catalog.CatalogV2Util$.MODULE$.v2ColumnsToStructType(columns);
    }

    /** Column DEFAULT values: CREATE TABLE ... DEFAULT, ALTER TABLE ... ADD COLUMN ... DEFAULT and ALTER COLUMN
     * ... SET / DROP DEFAULT, kept in the Glue column's Parameters. */
    @Override
    public java.util.Set<org.apache.spark.sql.connector.catalog.TableCatalogCapability> capabilities() {
        return java.util.Set.of(org.apache.spark.sql.connector.catalog.TableCatalogCapability.SUPPORT_COLUMN_DEFAULT_VALUE);
    }

    /** Makes a table through the backend's {@code method} and loads it, its errors as Spark's. */
    private Table created(Identifier ident, String method, ObjectNode args)
            throws TableAlreadyExistsException, NoSuchNamespaceException {
        try {
            backend.call(method, args);
        } catch (Backend.GlueError e) {
            if (e.is("AlreadyExistsException")) {
                throw new TableAlreadyExistsException(ident.toString());
            }
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchNamespaceException(ident.namespace());
            }
            throw e.toSpark("identifier", quoted(ident));
        }
        try {
            return loadTable(ident);
        } catch (NoSuchTableException e) {
            throw new IllegalStateException("gluecat: table " + ident + " vanished right after it was created", e);
        }
    }

    @Override
    public Table createTable(Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
            throws TableAlreadyExistsException, NoSuchNamespaceException {
        if (columns.length == 0 && partitions.length == 0 && properties.get("location") != null) {
            return createInferred(ident, properties);
        }
        return createTable(ident, schemaOf(columns), partitions, properties);
    }

    /**
     * {@code spark.catalog.createTable(name, path=..., source=...)} with no schema: the schema and partition columns
     * are inferred from the files as Spark infers them (its file source's schema inference and partition discovery),
     * and the partitions found in the folders are registered, as Spark's own catalog does for such a table.
     */
    private Table createInferred(Identifier ident, Map<String, String> properties)
            throws TableAlreadyExistsException, NoSuchNamespaceException {
        org.apache.spark.sql.SparkSession spark = org.apache.spark.sql.SparkSession.active();
        String provider = properties.getOrDefault("provider", spark.conf().get("spark.sql.sources.default"));
        Map<String, String> options = new HashMap<>();
        properties.forEach((k, v) -> {
            if (k.startsWith("option.") && !k.equals("option.path")) {
                options.put(k.substring("option.".length()), v);
            }
        });
        org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> files =
            spark.read().format(provider).options(options).load(properties.get("location"));
        List<Transform> partitioning = new ArrayList<>();
        if (files.queryExecution().analyzed()
                instanceof org.apache.spark.sql.execution.datasources.LogicalRelation relation
                && relation.relation() instanceof org.apache.spark.sql.execution.datasources.HadoopFsRelation fs) {
            for (String column : fs.partitionSchema().fieldNames()) {
                partitioning.add(org.apache.spark.sql.connector.expressions.Expressions.identity(column));
            }
        }
        Table table = createTable(ident, files.schema(), partitioning.toArray(new Transform[0]), properties);
        if (!partitioning.isEmpty()) {
            ObjectNode args = Backend.args().put("table", ident.namespace()[0] + "." + ident.name())
                .put("add", true).put("drop", false);
            backend.call("repair_table", args);
        }
        return table;
    }

    /** CREATE TABLE ... LIKE: a gluecat source's Glue descriptor (format, SerDe and its parameters, columns and
     * partition keys) copied by the backend; another catalog's table by its schema, partitioning and provider.
     * USING, LOCATION and TBLPROPERTIES of the statement apply on top, as in Spark. */
    @Override
    public Table createTableLike(Identifier ident, org.apache.spark.sql.connector.catalog.TableInfo info, Table source)
            throws TableAlreadyExistsException, NoSuchNamespaceException {
        if (source instanceof GlueTable g) {
            ObjectNode args = Backend.table(database(ident.namespace()), ident.name());
            args.put("source_database", g.info().ident.namespace()[0]).put("source_name", g.info().ident.name());
            args.set("properties", Backend.JSON.valueToTree(info.properties()));
            return created(ident, "create_table_like", args);
        }
        Map<String, String> props = new HashMap<>();
        source.properties().forEach((k, v) -> {
            if (k.equals("provider") || k.startsWith("option.")) {
                props.put(k, v);
            }
        });
        props.putAll(info.properties());
        return createTable(ident, source.columns(), source.partitioning(), props);
    }

    private static ObjectNode column(StructField f) {
        ObjectNode c = Backend.args().put("name", f.name()).put("type", f.dataType().catalogString());
        if (f.getComment().isDefined()) {
            c.put("comment", f.getComment().get());
        }
        for (String[] key : new String[][] {{TableInfo.CURRENT_DEFAULT, "current_default"},
                {TableInfo.EXISTS_DEFAULT, "exists_default"}}) {
            if (f.metadata().contains(key[0])) {
                c.put(key[1], f.metadata().getString(key[0]));
            }
        }
        return c;
    }

    @Override
    public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
        ObjectNode args = Backend.table(ident.namespace()[0], ident.name());
        ArrayNode out = args.putArray("changes");
        for (TableChange change : changes) {
            out.add(change(change));
        }
        try {
            backend.call("alter_table", args);
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchTableException(ident);
            }
            throw e.toSpark();
        }
        return loadTable(ident);
    }

    private static String field(String[] names) {
        if (names.length != 1) {
            throw new IllegalArgumentException("gluecat: changing nested field " + String.join(".", names)
                + " is not supported; change the top-level column's type instead");
        }
        return names[0];
    }

    private static ObjectNode change(TableChange change) {
        ObjectNode c = Backend.args();
        if (change instanceof TableChange.SetProperty s) {
            c.put("op", "set_property").put("key", s.property()).put("value", s.value());
        } else if (change instanceof TableChange.RemoveProperty r) {
            c.put("op", "remove_property").put("key", r.property());
        } else if (change instanceof TableChange.AddColumn a) {
            c.put("op", "add_column").put("name", field(a.fieldNames())).put("type", a.dataType().catalogString());
            if (a.comment() != null) {
                c.put("comment", a.comment());
            }
            if (a.defaultValue() != null) {  // its SQL, and the value the rows written before read as
                ObjectNode d = column(schemaOf(new Column[] {Column.create(a.fieldNames()[0], a.dataType(), true,
                    null, a.defaultValue(), null)}).fields()[0]);
                c.put("current_default", d.path("current_default").asText());
                c.put("exists_default", d.path("exists_default").asText());
            }
            if (a.position() instanceof TableChange.After after) {
                c.put("after", after.column());
            } else if (a.position() instanceof TableChange.First) {
                c.put("first", true);
            }
        } else if (change instanceof TableChange.RenameColumn r) {
            c.put("op", "rename_column").put("name", field(r.fieldNames())).put("new_name", r.newName());
        } else if (change instanceof TableChange.UpdateColumnType u) {
            c.put("op", "update_column_type").put("name", field(u.fieldNames()))
                .put("type", u.newDataType().catalogString());
        } else if (change instanceof TableChange.UpdateColumnComment u) {
            c.put("op", "update_column_comment").put("name", field(u.fieldNames())).put("comment", u.newComment());
        } else if (change instanceof TableChange.UpdateColumnDefaultValue u) {
            String sql = u.newDefaultValue();  // empty: DROP DEFAULT
            c.put("op", "update_column_default").put("name", field(u.fieldNames()));
            if (sql != null && !sql.isEmpty()) {
                c.put("default", sql);
            }
        } else if (change instanceof TableChange.DeleteColumn d) {
            c.put("op", "delete_column").put("name", field(d.fieldNames())).put("if_exists", d.ifExists());
        } else {
            throw new UnsupportedOperationException("gluecat: ALTER TABLE change " + change.getClass().getSimpleName()
                + " is not supported by Glue tables");
        }
        return c;
    }

    @Override
    public boolean dropTable(Identifier ident) {
        return drop(ident, false);
    }

    @Override
    public boolean purgeTable(Identifier ident) {
        return drop(ident, true);
    }

    private boolean drop(Identifier ident, boolean purge) {
        if (ident.namespace().length != 1) {
            return false;
        }
        try {
            backend.call("drop_table", Backend.table(ident.namespace()[0], ident.name()).put("purge", purge));
            return true;
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                return false;
            }
            throw e.toSpark();
        }
    }

    @Override
    public void renameTable(Identifier oldIdent, Identifier newIdent)
            throws NoSuchTableException, TableAlreadyExistsException {
        ObjectNode args = Backend.table(oldIdent.namespace()[0], oldIdent.name());
        String[] target = newIdent.namespace();
        if (target.length == 2 && target[0].equals(name)) {
            target = new String[] {target[1]};  // RENAME TO glue.db.t names the catalog too
        }
        if (target.length == 0) {
            target = oldIdent.namespace();
        }
        if (target.length != 1) {
            throw new IllegalArgumentException("gluecat: cannot rename " + oldIdent + " to " + newIdent
                + ": the new name must be db.table");
        }
        args.put("new_database", target[0]).put("new_name", newIdent.name());
        try {
            backend.call("rename_table", args);
        } catch (Backend.GlueError e) {
            if (e.is("EntityNotFoundException")) {
                throw new NoSuchTableException(oldIdent);
            }
            if (e.is("AlreadyExistsException")) {
                throw new TableAlreadyExistsException(newIdent.toString());
            }
            throw e.toSpark("identifier", quoted(Identifier.of(target, newIdent.name())));
        }
    }

    // -- procedures ---------------------------------------------------------------------------------

    @Override
    public UnboundProcedure loadProcedure(Identifier ident) {
        UnboundProcedure p = Procedures.load(this, backend, ident);
        if (p == null) {
            throw new IllegalArgumentException("gluecat: no procedure " + name + "." + ident + "; the procedures are "
                + String.join(", ", Procedures.NAMES));
        }
        return p;
    }

    @Override
    public Identifier[] listProcedures(String[] namespace) {
        return Procedures.list(namespace);
    }
}
