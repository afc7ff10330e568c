package io.gluecat.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The partition identities of each table, as of a warehouse version, kept in the JVM so that Spark's
 * one-call-per-partition existence checks (ALTER TABLE ADD/DROP PARTITION check each spec) cost at most one
 * question per statement: "are the table's partitions unchanged since version v?", asked along with the
 * statement's table load when there is a copy (see {@link #ask}). Commits that did not add or
 * drop any of the table's partitions (other tables, segment merges) leave the copy valid. This JVM's own
 * commits are applied in place and listed, so the check passes over them and a stream of partition DDL
 * never re-reads the table. A statement may see a newer committed state than the version it checked,
 * never an older one.
 */
final class Identities {
    /** The keys as of {@code version}, plus this JVM's own commits after it ({@code applied}). */
    private record Entry(long version, Set<String> keys, List<Long> applied) {}

    /** Past this many own commits without a check in between, the copy is dropped and read afresh. */
    private static final int MAX_APPLIED = 64;

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
        if (cached != null) {
            ArrayNode applied = args.putArray("applied");
            cached.applied().forEach(applied::add);
        }
        JsonNode answer = backend.call("partition_identities", args);
        long version = answer.get("version").asLong();
        if (cached != null && answer.path("unchanged").asBoolean(false)) {
            return relabelled(name, cached, version);
        }
        Set<String> keys = ConcurrentHashMap.newKeySet();
        if (answer.get("count").asInt() > 0) {
            for (String k : answer.get("keys").asText().split("\n", -1)) {
                keys.add(k);
            }
        }
        CACHE.put(name, new Entry(version, keys, List.of()));
        return keys;
    }

    /** The cached copy, now labelled {@code version}; unless another statement's commit replaced the entry
     * meanwhile (its label is newer). */
    private static Set<String> relabelled(String name, Entry cached, long version) {
        CACHE.computeIfPresent(name, (k, now) -> now == cached ? new Entry(version, now.keys(), List.of()) : now);
        return cached.keys();
    }

    /** A get_table call that also asked whether the cached copy is still current. */
    record Asked(String name, Entry cached) {
        /** The copy, if the answer says the table's partitions are unchanged since its version; else null,
         * and the copy is dropped: later loads would only find it stale again, each reading the log since
         * its version, until an existence check reads the partitions afresh. */
        Set<String> answer(JsonNode table) {
            JsonNode at = table.path("identities_unchanged_at");
            if (at.isIntegralNumber()) {
                return relabelled(name, cached, at.asLong());
            }
            CACHE.computeIfPresent(name, (k, now) -> now == cached ? null : now);
            return null;
        }
    }

    /**
     * Adds to a get_table call's {@code args} the check {@link #current} would make, if this JVM holds a
     * copy of the table's identities: the statement that loads the table (partition DDL loads it just
     * before its existence checks) then needs no call of its own for them. Null if there is no copy.
     */
    static Asked ask(String warehouse, ObjectNode args) {
        String name = table(warehouse, args);
        Entry cached = CACHE.get(name);
        if (cached == null) {
            return null;
        }
        args.put("identities_since", cached.version());
        ArrayNode applied = args.putArray("identities_applied");
        cached.applied().forEach(applied::add);
        return new Asked(name, cached);
    }

    /** After this JVM's commit at {@code version}: applied to the cached copy, which lists the commit. */
    static void committed(String warehouse, ObjectNode table, long version, List<List<String>> added,
            List<List<String>> dropped) {
        CACHE.compute(table(warehouse, table), (k, cached) -> {
            if (cached == null || version <= cached.version() || cached.applied().size() >= MAX_APPLIED) {
                return null;
            }
            for (List<String> v : added) {
                cached.keys().add(key(v));
            }
            for (List<String> v : dropped) {
                cached.keys().remove(key(v));
            }
            if (version == cached.version() + 1 && cached.applied().isEmpty()) {
                return new Entry(version, cached.keys(), List.of());
            }
            List<Long> applied = new ArrayList<>(cached.applied());
            applied.add(version);
            return new Entry(cached.version(), cached.keys(), List.copyOf(applied));
        });
    }
}
