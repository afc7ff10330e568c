package io.gluecat.spark;

/**
 * Opens the Python catalog of a Spark catalog's options (implemented in Python, gluecat.spark.Catalogs): a PySpark
 * driver registers one, so that every gluecat catalog of the session, also one configured at run time, is served
 * in the driver's own Python process.
 */
public interface PythonCatalogFactory {
    /** The backend of the catalog whose options (spark.sql.catalog.&lt;name&gt;.*, lower-case keys) are given. */
    PythonCatalog open(String jsonOptions);
}
