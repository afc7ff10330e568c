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
import py4j.GatewayServer;

/**
 * The JVM-only bridge (spark-sql, spark-shell, spark-submit of a jar): no Python driver exists, so the shim
 * starts {@code python -m gluecat.spark.bridge} and serves it a Py4J gateway on 127.0.0.1 guarded by a
 * per-process secret. The child registers its backend in {@link Registry} through that gateway, then waits
 * on its stdin: when the JVM exits the pipe closes and the child ends (a shutdown hook also kills it).
 */
final class Bridge {
    private static final long START_TIMEOUT_MS = 120_000;

    private Bridge() {}

    static String interpreter(Map<String, String> options) {
        String python = options == null ? null : options.get("python");
        if (python == null || python.isEmpty()) {
            python = System.getenv("PYSPARK_PYTHON");
        }
        return python == null || python.isEmpty() ? "python3" : python;
    }

    /** Starts a Python backend for the warehouse and waits until it has registered itself. */
    static void start(String warehouse, Map<String, String> options) {
        byte[] token = new byte[32];
        new SecureRandom().nextBytes(token);
        String secret = HexFormat.of().formatHex(token);
        InetAddress loopback = InetAddress.getLoopbackAddress();
        GatewayServer server = new GatewayServer.GatewayServerBuilder()
            .javaPort(0)
            .javaAddress(loopback)
            .callbackClient(0, loopback, secret)
            .authToken(secret)
            .build();
        server.start(true);
        String python = interpreter(options);
        File log;
        Process child;
        try {
            log = File.createTempFile("gluecat-bridge-", ".log");
            log.deleteOnExit();
            ProcessBuilder pb = new ProcessBuilder(List.of(python, "-m", "gluecat.spark.bridge"));
            pb.environment().put("GLUECAT_BRIDGE_PORT", Integer.toString(server.getListeningPort()));
            pb.environment().put("GLUECAT_BRIDGE_SECRET", secret);
            pb.environment().put("GLUECAT_WAREHOUSE", warehouse);
            pb.redirectErrorStream(true).redirectOutput(log);
            child = pb.start();
        } catch (IOException e) {
            server.shutdown();
            throw new IllegalStateException("gluecat: cannot start the Python catalog with '" + python
                + "' (set spark.sql.catalog.<name>.python or PYSPARK_PYTHON to an interpreter with gluecat)", e);
        }
        Process started = child;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            started.destroy();
            server.shutdown();
        }, "gluecat-bridge-stop"));
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
        while (!Registry.has(warehouse)) {
            if (!child.isAlive()) {
                server.shutdown();
                throw new IllegalStateException("gluecat: the Python catalog (" + python + " -m gluecat.spark.bridge)"
                    + " exited with " + child.exitValue() + " before it registered:\n" + tail(log));
            }
            if (System.currentTimeMillis() > deadline) {
                child.destroy();
                server.shutdown();
                throw new IllegalStateException("gluecat: the Python catalog did not register within "
                    + START_TIMEOUT_MS / 1000 + " s:\n" + tail(log));
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
