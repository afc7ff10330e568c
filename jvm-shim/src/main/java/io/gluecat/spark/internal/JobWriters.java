package io.gluecat.spark.internal;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * The data writers of one write job that are open in this JVM, so that the job's abort can close the job to
 * new writers and wait for the open ones before it deletes the job's folder. Spark calls a failed job's abort
 * while tasks it has not stopped may still be writing; without the wait, such a task recreates the deleted
 * folder and leaves its files behind. Executors of other JVMs (cluster mode) are not seen here, as with
 * Spark's own commit protocols.
 */
final class JobWriters {
    private static final Map<String, JobWriters> JOBS = new ConcurrentHashMap<>();

    private final AtomicInteger open = new AtomicInteger();
    private volatile boolean closed;

    private JobWriters() {}

    private static JobWriters of(String jobId) {
        return JOBS.computeIfAbsent(jobId, k -> new JobWriters());
    }

    /** Wraps a job's writer factory so that its writers are counted under the job's id. */
    static DataWriterFactory tracked(String jobId, DataWriterFactory factory) {
        return new Factory(jobId, factory);
    }

    /** The job ended: forget it. */
    static void forget(String jobId) {
        JOBS.remove(jobId);
    }

    /**
     * Refuses the job's new writers and waits (up to {@code timeoutMillis}) until its open writers in this
     * JVM have closed; true if none is open.
     */
    static boolean closeAndWait(String jobId, long timeoutMillis) throws InterruptedException {
        JobWriters job = of(jobId);
        job.closed = true;
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (job.open.get() > 0) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(5);
        }
        return true;
    }

    private static final class Factory implements DataWriterFactory {
        private static final long serialVersionUID = 1L;
        private final String jobId;
        private final DataWriterFactory delegate;

        Factory(String jobId, DataWriterFactory delegate) {
            this.jobId = jobId;
            this.delegate = delegate;
        }

        @Override
        public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
            JobWriters job = of(jobId);
            // Counted before the check: an abort that closes the job after this sees the writer and waits.
            job.open.incrementAndGet();
            if (job.closed) {
                job.open.decrementAndGet();
                throw new IllegalStateException("gluecat: the write job " + jobId + " was aborted");
            }
            try {
                return new Writer(job, delegate.createWriter(partitionId, taskId));
            } catch (RuntimeException e) {
                job.open.decrementAndGet();
                throw e;
            }
        }
    }

    private static final class Writer implements DataWriter<InternalRow> {
        private final JobWriters job;
        private final DataWriter<InternalRow> delegate;
        private boolean done;

        Writer(JobWriters job, DataWriter<InternalRow> delegate) {
            this.job = job;
            this.delegate = delegate;
        }

        @Override
        public void write(InternalRow row) throws IOException {
            delegate.write(row);
        }

        @Override
        public WriterCommitMessage commit() throws IOException {
            return delegate.commit();
        }

        @Override
        public void abort() throws IOException {
            delegate.abort();
        }

        @Override
        public CustomTaskMetric[] currentMetricsValues() {
            return delegate.currentMetricsValues();
        }

        @Override
        public void close() throws IOException {
            try {
                delegate.close();
            } finally {
                if (!done) {
                    done = true;
                    job.open.decrementAndGet();
                }
            }
        }
    }
}
