package io.gluecat.spark;

/**
 * The one coarse interface the shim calls; implemented in Python (gluecat.spark.backend) over Py4J.
 * Every call is a socket round trip, so it takes whole requests: an operation name and a JSON document,
 * answering a JSON document {"ok": result} or {"error": code, "message": text}.
 */
public interface PythonCatalog {
    String call(String operation, String jsonArguments);
}
