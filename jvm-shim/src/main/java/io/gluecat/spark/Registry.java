package io.gluecat.spark;

import java.util.concurrent.ConcurrentHashMap;

/** Where the Python side registers its backend, by warehouse, before the catalog is first used. */
public final class Registry {
    private static final ConcurrentHashMap<String, PythonCatalog> BACKENDS = new ConcurrentHashMap<>();

    private Registry() {}

    public static void register(String warehouse, PythonCatalog backend) {
        BACKENDS.put(warehouse, backend);
    }

    public static PythonCatalog lookup(String warehouse, org.apache.spark.sql.util.CaseInsensitiveStringMap options) {
        return lookup(warehouse);
    }

    public static PythonCatalog lookup(String warehouse) {
        PythonCatalog backend = BACKENDS.get(warehouse);
        if (backend == null) {
            throw new IllegalStateException("no gluecat backend registered for warehouse " + warehouse
                + ": start the session with gluecat.spark.session(warehouse)");
        }
        return backend;
    }
}
