package io.gluecat.spark;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Which Spark statement the calling thread works for, so that a catalog service's reads may be kept for the rest of
 * it (Spark loads a table several times per statement) and never for the next one. Spark's analyser and optimiser
 * run inside a QueryPlanningTracker of their own query; a running query, and a command, carry their SQL execution
 * id in the thread's local properties. Neither: not known (nothing is kept).
 */
final class Statements {
    /** Each query's tracker, numbered once; weakly, so that a finished query's tracker goes. */
    private static final Map<Object, Long> TRACKERS = Collections.synchronizedMap(new WeakHashMap<>());
    private static final AtomicLong NEXT = new AtomicLong();

    private Statements() {}

    /** The statement's id, or null when the calling thread runs none. */
    static String current() {
        scala.Option<org.apache.spark.sql.catalyst.QueryPlanningTracker> tracker =
            org.apache.spark.sql.catalyst.QueryPlanningTracker$.MODULE$.get();
        if (tracker.isDefined()) {
            return "t" + TRACKERS.computeIfAbsent(tracker.get(), k -> NEXT.incrementAndGet());
        }
        scala.Option<org.apache.spark.SparkContext> context = org.apache.spark.SparkContext$.MODULE$.getActive();
        if (context.isDefined()) {
            String execution = context.get().getLocalProperty("spark.sql.execution.id");
            if (execution != null) {
                return "e" + execution;
            }
        }
        return null;
    }
}
