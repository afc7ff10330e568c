package io.gluecat.spark;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import javax.net.SocketFactory;
import py4j.CallbackClient;
import py4j.GatewayServer;

/**
 * The JVM-only bridge (spark-sql, spark-shell, spark-submit, and PySpark scripts that set the catalog with plain
 * Spark settings): no Python backend is registered, so the shim starts {@code python -m gluecat.spark.bridge} and
 * serves it a Py4J gateway on 127.0.0.1 guarded by a per-process secret. The child registers its backend in
 * {@link Registry} through that gateway, then waits on its stdin: when the JVM exits the pipe closes and the
 * child ends (a shutdown hook also kills it). The gateway's threads are daemons, so a finished job's JVM exits.
 */
final class Bridge {
    private static final long START_TIMEOUT_MS = 120_000;

    private Bridge() {}

    /** The interpreter to start, and why that one. */
    record Interpreter(String python, String why) {}

    /**
     * The interpreter for the catalog: the catalog's {@code python} option; else, when the driver is a PySpark
     * script that started this JVM, the driver's own interpreter (the JVM's parent process); else the driver
     * interpreter Spark itself would start for a PySpark job (spark.pyspark.driver.python, spark.pyspark.python,
     * PYSPARK_DRIVER_PYTHON, PYSPARK_PYTHON); else python3 from the PATH.
     */
    static Interpreter interpreter(String catalog, Map<String, String> options, Map<String, String> sparkConf,
            Map<String, String> env, Optional<String> parent) {
        String option = options == null ? null : options.get("python");
        if (option != null && !option.isEmpty()) {
            return new Interpreter(option, "spark.sql.catalog." + catalog + ".python");
        }
        if (env.get("_PYSPARK_DRIVER_CONN_INFO_PATH") != null && parent.isPresent()) {
            return new Interpreter(parent.get(), "the PySpark driver's own interpreter");
        }
        for (String key : List.of("spark.pyspark.driver.python", "spark.pyspark.python")) {
            String value = sparkConf.get(key);
            if (value != null && !value.isEmpty()) {
                return new Interpreter(value, key);
            }
        }
        for (String key : List.of("PYSPARK_DRIVER_PYTHON", "PYSPARK_PYTHON")) {
            String value = env.get(key);
            if (value != null && !value.isEmpty()) {
                return new Interpreter(value, "the environment variable " + key);
            }
        }
        return new Interpreter("python3", "the default, as none of spark.sql.catalog." + catalog
            + ".python, spark.pyspark.python or PYSPARK_PYTHON is set");
    }

    static Interpreter interpreter(String catalog, Map<String, String> options) {
        Map<String, String> conf = new java.util.HashMap<>();
        org.apache.spark.SparkEnv env = org.apache.spark.SparkEnv.get();
        if (env != null) {
            for (scala.Tuple2<String, String> kv : env.conf().getAll()) {
                conf.put(kv._1(), kv._2());
            }
        }
        return interpreter(catalog, options, conf, System.getenv(), parentInterpreter());
    }

    /**
     * The interpreter the parent process runs as it was invoked (its argv[0], resolved against its working folder
     * or the PATH), not the file it resolves to: a virtual environment's python is a link to the base
     * interpreter, and only the invoked path finds the environment's packages.
     */
    static Optional<String> parentInterpreter() {
        Optional<ProcessHandle> parent = ProcessHandle.current().parent();
        if (parent.isEmpty()) {
            return Optional.empty();
        }
        java.nio.file.Path proc = java.nio.file.Path.of("/proc", Long.toString(parent.get().pid()));
        try {
            String argv0 = new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8)
                .split("\u0000", 2)[0];
            if (argv0.contains("/")) {
                java.nio.file.Path path = java.nio.file.Path.of(argv0);
                if (!path.isAbsolute()) {
                    path = Files.readSymbolicLink(proc.resolve("cwd")).resolve(path);
                }
                return Optional.of(path.normalize().toString());
            }
            for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
                java.nio.file.Path candidate = java.nio.file.Path.of(dir, argv0);
                if (!dir.isEmpty() && Files.isExecutable(candidate)) {
                    return Optional.of(candidate.toString());
                }
            }
        } catch (IOException | RuntimeException e) {
            // No /proc (not Linux), or not readable: the resolved executable is the best left.
        }
        return parent.get().info().command();
    }

    private static String howToChoose(String catalog) {
        return "set spark.sql.catalog." + catalog + ".python (or spark.pyspark.python, or PYSPARK_PYTHON) to a Python"
            + " interpreter that has gluecat installed";
    }

    /** Starts a Python backend for the catalog of these options (Backend.key) and waits until it has registered
     * itself under the key. */
    static void start(String catalog, String key, Map<String, String> options) {
        byte[] token = new byte[32];
        new SecureRandom().nextBytes(token);
        String secret = HexFormat.of().formatHex(token);
        InetAddress loopback = InetAddress.getLoopbackAddress();
        GatewayServer server = new GatewayServer.GatewayServerBuilder()
            .javaPort(0)
            .javaAddress(loopback)
            // No idle-connection cleaner (minConnectionTime 0): its executor's thread is never a daemon and would
            // keep the JVM of a finished job alive. resetCallbackClient copies these settings.
            .callbackClient(new CallbackClient(0, loopback, secret, 0, TimeUnit.SECONDS, SocketFactory.getDefault(),
                true, 0))
            .authToken(secret)
            .build();
        // Its threads (the accept loop, and the connection threads that loop starts) inherit daemon status from
        // the thread that starts them: started from a daemon thread, they never keep a finished job's JVM alive.
        Thread starter = new Thread(() -> server.start(true), "gluecat-bridge-start");
        starter.setDaemon(true);
        starter.start();
        try {
            starter.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("gluecat: interrupted while starting the Python catalog's gateway", e);
        }
        Interpreter chosen = interpreter(catalog, options);
        String python = chosen.python();
        String tried = "'" + python + "' (" + chosen.why() + ")";
        File log;
        Process child;
        try {
            log = File.createTempFile("gluecat-bridge-", ".log");
            log.deleteOnExit();
            ProcessBuilder pb = new ProcessBuilder(List.of(python, "-m", "gluecat.spark.bridge"));
            pb.environment().put("GLUECAT_BRIDGE_PORT", Integer.toString(server.getListeningPort()));
            pb.environment().put("GLUECAT_BRIDGE_SECRET", secret);
            pb.environment().put("GLUECAT_KEY", key);
            pb.environment().put("GLUECAT_CATALOG", Backend.JSON.valueToTree(options).toString());
            if (!Backend.remote(options)) {
                pb.environment().put("GLUECAT_WAREHOUSE", options.get("warehouse"));
            }
            pb.redirectErrorStream(true).redirectOutput(log);
            child = pb.start();
        } catch (IOException e) {
            server.shutdown();
            throw new IllegalStateException("gluecat: cannot start the Python catalog with " + tried + ": "
                + e.getMessage() + "; " + howToChoose(catalog), e);
        }
        Process started = child;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            started.destroy();
            server.shutdown();
        }, "gluecat-bridge-stop"));
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
        while (!Registry.has(key)) {
            if (!child.isAlive()) {
                server.shutdown();
                throw new IllegalStateException("gluecat: the Python catalog (" + python + " -m gluecat.spark.bridge,"
                    + " chosen as " + chosen.why() + ") exited with " + child.exitValue() + " before it registered; "
                    + howToChoose(catalog) + ". Its output:\n" + tail(log));
            }
            if (System.currentTimeMillis() > deadline) {
                child.destroy();
                server.shutdown();
                throw new IllegalStateException("gluecat: the Python catalog started with " + tried
                    + " did not register within " + START_TIMEOUT_MS / 1000 + " s:\n" + tail(log));
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("gluecat: interrupted while starting the Python catalog", e);
            }
        }
    }

    private static String tail(File log) {
        try {
            String text = new String(Files.readAllBytes(log.toPath()), StandardCharsets.UTF_8);
            return text.length() > 4000 ? text.substring(text.length() - 4000) : text;
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }
}
