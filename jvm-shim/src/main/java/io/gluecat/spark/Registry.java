package io.gluecat.spark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where the Python side registers its backend, by warehouse. A PySpark driver registers one before the
 * catalog is first used (gluecat.spark.session); in a JVM-only process the first lookup starts the bridge.
 */
public final class Registry {
    private static final ConcurrentHashMap<String, PythonCatalog> BACKENDS = new ConcurrentHashMap<>();

    private Registry() {}

    public static void register(String warehouse, PythonCatalog backend) {
        BACKENDS.put(warehouse, backend);
    }

    static boolean has(String warehouse) {
        return BACKENDS.containsKey(warehouse);
    }

    public static PythonCatalog lookup(String warehouse) {
        return lookup("glue", warehouse, null);
    }

    /** The backend for the warehouse, starting the Python bridge (once per JVM and warehouse) when there is none;
     * {@code catalog} is the Spark catalog's name, for the bridge's messages. */
    public static PythonCatalog lookup(String catalog, String warehouse, Map<String, String> options) {
        PythonCatalog backend = BACKENDS.get(warehouse);
        if (backend != null) {
            return backend;
        }
        synchronized (Registry.class) {
            if (!BACKENDS.containsKey(warehouse)) {
                Bridge.start(catalog, warehouse, options);
            }
        }
        return BACKENDS.get(warehouse);
    }
}
