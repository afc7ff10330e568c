package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/** Calls into the Python catalog of one warehouse: one operation, one JSON document each way. */
public final class Backend {
    static final ObjectMapper JSON = new ObjectMapper();

    private final String warehouse;
    private final org.apache.spark.sql.util.CaseInsensitiveStringMap options;

    Backend(String warehouse, org.apache.spark.sql.util.CaseInsensitiveStringMap options) {
        this.warehouse = warehouse;
        this.options = options;
    }

    String warehouse() {
        return warehouse;
    }

    static ObjectNode args() {
        return JSON.createObjectNode();
    }

    static ObjectNode table(String database, String name) {
        return args().put("database", database).put("name", name);
    }

    /** The answer's "ok" part; a gluecat error arrives as {@link GlueError} carrying the Glue error code. */
    public JsonNode call(String op, ObjectNode arguments) {
        String answer = Registry.lookup(warehouse, options).call(op, arguments.toString());
        JsonNode node;
        try {
            node = JSON.readTree(answer);
        } catch (IOException e) {
            throw new IllegalStateException("gluecat: unreadable answer from the Python catalog: " + answer, e);
        }
        if (node.has("error")) {
            throw new GlueError(node.get("error").asText(), node.get("message").asText());
        }
        return node.get("ok");
    }

    /** A gluecat error: its Glue code (EntityNotFoundException, ...) and message, raised where Spark has none. */
    public static final class GlueError extends RuntimeException {
        public final String code;

        GlueError(String code, String message) {
            super("gluecat " + code + ": " + message);
            this.code = code;
        }

        boolean is(String other) {
            return code.equals(other);
        }

        /** Glue's InvalidInputException is a bad argument; Spark shows IllegalArgumentException's message as is. */
        RuntimeException toSpark() {
            if (is("InvalidInputException") || is("ValidationException")) {
                return new IllegalArgumentException(getMessage(), this);
            }
            return this;
        }
    }
}
