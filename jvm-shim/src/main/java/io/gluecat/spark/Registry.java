package io.gluecat.spark;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where the Python side registers its backends, by catalog key ({@link Backend#key}: a warehouse, or a catalog
 * service's options). A PySpark driver registers a factory (and its session's backend) before the catalog is first
 * used (gluecat.spark.session): every catalog of the session is then opened in the driver's process. Without one,
 * as in a JVM-only process, the first lookup of a key starts a bridge for it.
 */
public final class Registry {
    private static final ConcurrentHashMap<String, PythonCatalog> BACKENDS = new ConcurrentHashMap<>();
    private static volatile PythonCatalogFactory factory;

    private Registry() {}

    public static void register(String key, PythonCatalog backend) {
        BACKENDS.put(key, backend);
    }

    /** The driver's factory of backends, for the keys nothing is registered for. */
    public static void registerFactory(PythonCatalogFactory f) {
        factory = f;
    }

    /** The backend registered under the key, or null (nothing is started). */
    public static PythonCatalog registered(String key) {
        return BACKENDS.get(key);
    }

    static boolean has(String key) {
        return BACKENDS.containsKey(key);
    }

    public static PythonCatalog lookup(String warehouse) {
        return lookup("glue", warehouse, Map.of("warehouse", warehouse));
    }

    /** The backend for the key: the one registered; else one the driver's factory opens; else a bridge is started
     * (once per JVM and key). {@code catalog} is the Spark catalog's name, for the bridge's messages. */
    public static PythonCatalog lookup(String catalog, String key, Map<String, String> options) {
        PythonCatalog backend = BACKENDS.get(key);
        if (backend != null) {
            return backend;
        }
        synchronized (Registry.class) {
            if (!BACKENDS.containsKey(key)) {
                PythonCatalogFactory f = factory;
                if (f != null) {
                    BACKENDS.put(key, f.open(Backend.JSON.valueToTree(options).toString()));
                } else {
                    Bridge.start(catalog, key, options);
                }
            }
        }
        return BACKENDS.get(key);
    }
}
