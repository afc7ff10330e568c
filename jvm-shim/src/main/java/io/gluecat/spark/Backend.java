package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/** Calls into the Python catalog of one Spark catalog: one operation, one JSON document each way. */
public final class Backend {
    static final ObjectMapper JSON = new ObjectMapper();

    private final String catalog;
    private final String key;
    private final Map<String, String> options;

    Backend(String catalog, org.apache.spark.sql.util.CaseInsensitiveStringMap options) {
        this.catalog = catalog;
        this.options = new java.util.TreeMap<>();
        options.forEach((k, v) -> this.options.put(k.toLowerCase(java.util.Locale.ROOT), v));
        this.key = key(this.options);
    }

    /** Which Python catalog the options name: a warehouse by its path (as before catalog services), a catalog
     * service by its endpoint, region, profile and warehouse. Catalogs of one key share one backend. */
    static String key(Map<String, String> options) {
        if (!remote(options)) {
            return options.get("warehouse");
        }
        Map<String, String> names = new java.util.TreeMap<>();
        for (String option : List.of("endpoint", "region", "profile", "warehouse")) {
            if (options.get(option) != null) {
                names.put(option, options.get(option));
            }
        }
        return "glue-api:" + JSON.valueToTree(names);
    }

    /** Whether the options name a catalog service over the Glue API (an endpoint, or AWS Glue by its region or
     * profile) rather than a warehouse opened by this application. */
    static boolean remote(Map<String, String> options) {
        return options.get("endpoint") != null
            || (options.get("warehouse") == null && (options.get("region") != null || options.get("profile") != null));
    }

    /** The key of this catalog's Python backend (and of what the JVM keeps for it, see Identities). */
    String key() {
        return key;
    }

    static ObjectNode args() {
        return JSON.createObjectNode();
    }

    static ObjectNode table(String database, String name) {
        return args().put("database", database).put("name", name);
    }

    /** The answer's "ok" part; a gluecat error arrives as {@link GlueError} carrying the Glue error code. */
    public JsonNode call(String op, ObjectNode arguments) {
        String statement = Statements.current();
        if (statement != null) {
            arguments.put("statement", statement);  // a catalog service's reads are kept for it, see Statements
        } else {
            arguments.remove("statement");
        }
        String answer = Registry.lookup(catalog, key, options).call(op, arguments.toString());
        JsonNode node;
        try {
            node = JSON.readTree(answer);
        } catch (IOException e) {
            throw new IllegalStateException("gluecat: unreadable answer from the Python catalog: " + answer, e);
        }
        if (node.has("error")) {
            JsonNode spark = node.get("spark");
            throw new GlueError(node.get("error").asText(), node.get("message").asText(),
                spark == null ? null : spark.get("class").asText(),
                spark == null ? Map.of() : TableInfo.strings(spark.get("params")));
        }
        return node.get("ok");
    }

    /** Throws a checked exception (Spark's AnalysisException) from methods whose Java signature does not declare
     * it, as Scala code does; Spark catches it by its class. */
    @SuppressWarnings("unchecked")
    static <T extends Throwable> T unchecked(Throwable t) throws T {
        throw (T) t;
    }

    /** A gluecat error: its Glue code (EntityNotFoundException, ...) and message, raised where Spark has none. */
    public static final class GlueError extends RuntimeException {
        public final String code;
        /** Spark's error class when the backend refused the request as Spark's own catalogs do, else null. */
        final String sparkClass;
        final Map<String, String> sparkParams;

        GlueError(String code, String message, String sparkClass, Map<String, String> sparkParams) {
            super("gluecat " + code + ": " + message);
            this.code = code;
            this.sparkClass = sparkClass;
            this.sparkParams = sparkParams;
        }

        boolean is(String other) {
            return code.equals(other);
        }

        boolean isSpark(String errorClass) {
            return errorClass.equals(sparkClass);
        }

        /** Spark's own AnalysisException for a refusal that has one, with {@code qualified} (Spark's quoted
         * name of the table or schema, catalog included) in place of the backend's name where given. */
        RuntimeException toSpark(String nameParam, String qualified) {
            if (sparkClass != null) {
                Map<String, String> params = new java.util.HashMap<>(sparkParams);
                if (nameParam != null && params.containsKey(nameParam)) {
                    params.put(nameParam, qualified);
                }
                throw Backend.<RuntimeException>unchecked(new org.apache.spark.sql.AnalysisException(sparkClass,
                    scala.collection.immutable.Map$.MODULE$.from(scala.jdk.javaapi.CollectionConverters.asScala(params))));
            }
            return toSpark();
        }

        /** Glue's InvalidInputException is a bad argument; Spark shows IllegalArgumentException's message as is.
         * A refusal with Spark's own error class becomes Spark's AnalysisException of that class. */
        RuntimeException toSpark() {
            if (sparkClass != null) {
                return toSpark(null, null);
            }
            if (is("InvalidInputException") || is("ValidationException")) {
                return new IllegalArgumentException(getMessage(), this);
            }
            return this;
        }
    }
}
