package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Spark catalog plugin over a gluecat warehouse: a pure adapter, all catalog logic lives in Python.
 *
 * <p>Options (spark.sql.catalog.&lt;name&gt;.*): {@code warehouse} (required) the gluecat warehouse path or URI,
 * the key under which the Python backend registers itself in {@link Registry}.
 *
 * <p>UNFINISHED: namespaces only; table operations are not implemented yet.
 */
public class GlueCatalog implements TableCatalog, SupportsNamespaces {
    private static final ObjectMapper JSON = new ObjectMapper();
    private String name;
    private String warehouse;

    @Override
    public void initialize(String name, CaseInsensitiveStringMap options) {
        this.name = name;
        this.warehouse = options.get("warehouse");
        if (warehouse == null) {
            throw new IllegalArgumentException("spark.sql.catalog." + name + ".warehouse is required");
        }
    }

    @Override
    public String name() {
        return name;
    }

    private JsonNode call(String op, ObjectNode args) {
        String answer = Registry.lookup(warehouse).call(op, args.toString());
        try {
            JsonNode node = JSON.readTree(answer);
            if (node.has("error")) {
                throw new GlueError(node.get("error").asText(), node.get("message").asText());
            }
            return node.get("ok");
        } catch (java.io.IOException e) {
            throw new IllegalStateException("unreadable answer from gluecat backend: " + answer, e);
        }
    }

    /** A gluecat error code and message, turned into Spark's own exceptions at each call site. */
    static final class GlueError extends RuntimeException {
        final String code;

        GlueError(String code, String message) {
            super(message);
            this.code = code;
        }
    }

    private static String database(String[] namespace) throws NoSuchNamespaceException {
        if (namespace.length != 1) {
            throw new NoSuchNamespaceException(namespace);
        }
        return namespace[0];
    }

    @Override
    public String[][] listNamespaces() {
        JsonNode names = call("list_databases", JSON.createObjectNode());
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
        ObjectNode args = JSON.createObjectNode().put("name", database(namespace));
        try {
            JsonNode props = call("get_database", args);
            Map<String, String> out = new HashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = props.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                out.put(e.getKey(), e.getValue().asText());
            }
            return out;
        } catch (GlueError e) {
            if (e.code.equals("EntityNotFoundException")) {
                throw new NoSuchNamespaceException(namespace);
            }
            throw e;
        }
    }

    @Override
    public void createNamespace(String[] namespace, Map<String, String> metadata)
            throws NamespaceAlreadyExistsException {
        ObjectNode args = JSON.createObjectNode();
        args.put("name", namespace.length == 1 ? namespace[0] : String.join(".", namespace));
        args.set("properties", JSON.valueToTree(metadata));
        try {
            call("create_database", args);
        } catch (GlueError e) {
            if (e.code.equals("AlreadyExistsException")) {
                throw new NamespaceAlreadyExistsException(namespace);
            }
            throw e;
        }
    }

    @Override
    public void alterNamespace(String[] namespace, NamespaceChange... changes) throws NoSuchNamespaceException {
        ObjectNode args = JSON.createObjectNode().put("name", database(namespace));
        ObjectNode set = args.putObject("set");
        List<String> remove = new ArrayList<>();
        for (NamespaceChange change : changes) {
            if (change instanceof NamespaceChange.SetProperty s) {
                set.put(s.property(), s.value());
            } else if (change instanceof NamespaceChange.RemoveProperty r) {
                remove.add(r.property());
            }
        }
        args.set("remove", JSON.valueToTree(remove));
        try {
            call("alter_database", args);
        } catch (GlueError e) {
            if (e.code.equals("EntityNotFoundException")) {
                throw new NoSuchNamespaceException(namespace);
            }
            throw e;
        }
    }

    @Override
    public boolean dropNamespace(String[] namespace, boolean cascade) throws NoSuchNamespaceException {
        ObjectNode args = JSON.createObjectNode().put("name", database(namespace)).put("cascade", cascade);
        try {
            return call("drop_database", args).asBoolean();
        } catch (GlueError e) {
            if (e.code.equals("EntityNotFoundException")) {
                throw new NoSuchNamespaceException(namespace);
            }
            throw e;
        }
    }

    @Override
    public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
        ObjectNode args = JSON.createObjectNode().put("name", database(namespace));
        try {
            JsonNode names = call("list_tables", args);
            Identifier[] out = new Identifier[names.size()];
            for (int i = 0; i < names.size(); i++) {
                out[i] = Identifier.of(namespace, names.get(i).asText());
            }
            return out;
        } catch (GlueError e) {
            if (e.code.equals("EntityNotFoundException")) {
                throw new NoSuchNamespaceException(namespace);
            }
            throw e;
        }
    }

    @Override
    public Table loadTable(Identifier ident) throws NoSuchTableException {
        if (ident.namespace().length != 1) {
            throw new NoSuchTableException(ident);
        }
        ObjectNode args = JSON.createObjectNode().put("database", ident.namespace()[0]).put("name", ident.name());
        JsonNode t;
        try {
            t = call("get_table", args);
        } catch (GlueError e) {
            if (e.code.equals("EntityNotFoundException")) {
                throw new NoSuchTableException(ident);
            }
            throw e;
        }
        StructType schema = new StructType();
        List<Transform> parts = new ArrayList<>();
        for (String group : new String[] {"columns", "partition_keys"}) {
            for (JsonNode c : t.get(group)) {
                String col = c.get("name").asText();
                schema = schema.add(col,
                    org.apache.spark.sql.types.DataType.fromDDL(c.get("type").asText()),
                    true, c.get("comment").asText());
                if (group.equals("partition_keys")) {
                    parts.add(org.apache.spark.sql.connector.expressions.Expressions.identity(col));
                }
            }
        }
        Map<String, String> props = new HashMap<>();
        t.get("properties").fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
        return new GlueTable(name + "." + ident, schema, parts.toArray(new Transform[0]), props);
    }

    @Override
    public Table createTable(Identifier ident, StructType schema, Transform[] partitions,
            Map<String, String> properties) {
        throw new UnsupportedOperationException("gluecat: CREATE TABLE through Spark is not implemented yet");
    }

    @Override
    public Table alterTable(Identifier ident, TableChange... changes) {
        throw new UnsupportedOperationException("gluecat: ALTER TABLE through Spark is not implemented yet");
    }

    @Override
    public boolean dropTable(Identifier ident) {
        if (ident.namespace().length != 1) {
            return false;
        }
        ObjectNode args = JSON.createObjectNode().put("database", ident.namespace()[0]).put("name", ident.name());
        try {
            call("drop_table", args);
            return true;
        } catch (GlueError e) {
            if (e.code.equals("EntityNotFoundException")) {
                return false;
            }
            throw e;
        }
    }

    @Override
    public void renameTable(Identifier oldIdent, Identifier newIdent) {
        throw new UnsupportedOperationException("gluecat: RENAME TABLE through Spark is not implemented yet");
    }
}
