package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The partition identities of each table, as of a warehouse version, kept in the JVM so that Spark's
 * one-call-per-partition existence checks (ALTER TABLE ADD/DROP PARTITION check each spec) cost one round
 * trip per statement: "unchanged since version v?" This JVM's own commits are applied in place when the
 * commit was made directly on the cached version, so a stream of partition DDL never re-reads the table.
 * A statement may see a newer committed state than the version it checked, never an older one.
 */
final class Identities {
    private record Entry(long version, Set<String> keys) {}

    private static final ConcurrentHashMap<String, Entry> CACHE = new ConcurrentHashMap<>();

    private Identities() {}

    private static String table(String warehouse, ObjectNode table) {
        return warehouse + "\u0000" + table.get("database").asText() + "\u0000" + table.get("name").asText();
    }

    /** A partition's identity as the backend writes it: values escaped, joined by NUL. */
    static String key(List<String> values) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < values.size(); i++) {
            if (i > 0) {
                out.append('\u0000');
            }
            String v = values.get(i);
            for (int j = 0; j < v.length(); j++) {
                char c = v.charAt(j);
                if (c == '\\') {
                    out.append("\\\\");
                } else if (c == '\u0000') {
                    out.append("\\0");
                } else if (c == '\n') {
                    out.append("\\n");
                } else {
                    out.append(c);
                }
            }
        }
        return out.toString();
    }

    /** The table's partition identities as of now (one backend call, which sends them only if they changed). */
    static Set<String> current(Backend backend, String warehouse, ObjectNode table) {
        String name = table(warehouse, table);
        Entry cached = CACHE.get(name);
        ObjectNode args = table.deepCopy();
        args.put("since", cached == null ? -1 : cached.version());
        JsonNode answer = backend.call("partition_identities", args);
        if (cached != null && answer.path("unchanged").asBoolean(false)) {
            return cached.keys();
        }
        Set<String> keys = ConcurrentHashMap.newKeySet();
        if (answer.get("count").asInt() > 0) {
            for (String k : answer.get("keys").asText().split("\n", -1)) {
                keys.add(k);
            }
        }
        CACHE.put(name, new Entry(answer.get("version").asLong(), keys));
        return keys;
    }

    /** After this JVM's commit at {@code version}: applied to the cache if it held version - 1, else dropped. */
    static void committed(String warehouse, ObjectNode table, long version, List<List<String>> added,
            List<List<String>> dropped) {
        CACHE.compute(table(warehouse, table), (k, cached) -> {
            if (cached == null || cached.version() != version - 1) {
                return null;
            }
            for (List<String> v : added) {
                cached.keys().add(key(v));
            }
            for (List<String> v : dropped) {
                cached.keys().remove(key(v));
            }
            return new Entry(version, cached.keys());
        });
    }
}
