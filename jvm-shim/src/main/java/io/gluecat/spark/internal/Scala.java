package io.gluecat.spark.internal;

import java.util.List;
import java.util.Map;
import scala.jdk.javaapi.CollectionConverters;

/** Java-to-Scala collection conversions for the Spark internals this package calls. */
public final class Scala {
    private Scala() {}

    public static <T> scala.collection.immutable.Seq<T> seq(List<T> list) {
        return CollectionConverters.asScala(list).toList();
    }

    public static <K, V> scala.collection.immutable.Map<K, V> map(Map<K, V> map) {
        return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(map));
    }

    public static <T> List<T> list(scala.collection.Iterable<T> seq) {
        return new java.util.ArrayList<>(CollectionConverters.asJavaCollection(seq));
    }

    public static <K, V> Map<K, V> javaMap(scala.collection.Map<K, V> map) {
        return CollectionConverters.asJava(map);
    }
}
