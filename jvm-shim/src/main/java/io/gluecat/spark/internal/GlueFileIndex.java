package io.gluecat.spark.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.datasources.DataSourceStrategy$;
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex;
import org.apache.spark.sql.execution.datasources.NoopCache$;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.execution.datasources.PartitionPath;
import org.apache.spark.sql.execution.datasources.PartitionSpec;
import org.apache.spark.sql.execution.datasources.PartitioningAwareFileIndex;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * The files of a Glue table, chosen by the catalog: Spark's partition filters go to gluecat as source
 * filters, and only the folders of the partitions it returns are listed (through Spark's own
 * InMemoryFileIndex, which also applies the full partition predicate to them).
 */
public final class GlueFileIndex extends PartitioningAwareFileIndex {
    /** One partition the catalog selected: its typed values and its folder. */
    public record Selected(InternalRow values, String location) {}

    /** Asks the catalog for the partitions matching ANDed source filters. */
    public interface Lister {
        List<Selected> list(Filter[] filters);
    }

    private final SparkSession spark;
    private final Path root;
    private final StructType partitionSchema;
    private final Lister lister;
    private final Map<String, String> options;
    private final Configuration conf;
    private volatile int lastSelected = -1;
    /** The selection made at planning time for these partition filters, reused by the listing. */
    private record Planned(scala.collection.immutable.Seq<Expression> filters, List<Selected> selected) {}

    private volatile Planned planned;

    public GlueFileIndex(SparkSession spark, String location, StructType partitionSchema, Lister lister,
            Map<String, String> options) {
        super(spark, Scala.map(options), scala.Option.empty(), NoopCache$.MODULE$);
        this.spark = spark;
        this.conf = spark.sessionState().newHadoopConf();
        this.root = qualify(conf, location);
        this.partitionSchema = partitionSchema;
        this.lister = lister;
        this.options = options;
    }

    /** A path with its file system's scheme: Spark silently reads nothing from an unqualified one. */
    public static Path qualify(Configuration conf, String location) {
        Path p = new Path(location);
        try {
            return p.getFileSystem(conf).makeQualified(p);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("gluecat: cannot resolve location " + location, e);
        }
    }

    /** How many partitions the last listing selected (-1 before the first). */
    public int lastSelected() {
        return lastSelected;
    }

    private InMemoryFileIndex index(List<Selected> selected) {
        List<PartitionPath> paths = new ArrayList<>();
        List<Path> roots = new ArrayList<>();
        for (Selected s : selected) {
            Path p = qualify(conf, s.location());
            paths.add(new PartitionPath(s.values(), p));
            roots.add(p);
        }
        PartitionSpec spec = new PartitionSpec(partitionSchema, Scala.seq(paths));
        return new InMemoryFileIndex(spark, Scala.seq(roots), Scala.map(options), scala.Option.empty(),
            NoopCache$.MODULE$, scala.Option.apply(spec), scala.Option.empty());
    }

    private InMemoryFileIndex unpartitioned() {
        return new InMemoryFileIndex(spark, Scala.seq(List.of(root)), Scala.map(options), scala.Option.empty(),
            NoopCache$.MODULE$, scala.Option.apply(new PartitionSpec(new StructType(), Scala.seq(List.of()))),
            scala.Option.empty());
    }

    @Override
    public scala.collection.immutable.Seq<PartitionDirectory> listFiles(
            scala.collection.immutable.Seq<Expression> partitionFilters,
            scala.collection.immutable.Seq<Expression> dataFilters) {
        if (partitionSchema.isEmpty()) {
            return unpartitioned().listFiles(partitionFilters, dataFilters);
        }
        List<Selected> selected = select(partitionFilters);
        lastSelected = selected.size();
        if (selected.isEmpty()) {
            return Scala.seq(List.of());
        }
        return index(selected).listFiles(partitionFilters, dataFilters);
    }

    /**
     * Called when Spark pushes the partition filters into the scan at planning time: the catalog's selection
     * is made then, so EXPLAIN's Location shows the selected partitions' folders and how many there are.
     */
    public void plan(scala.collection.immutable.Seq<Expression> partitionFilters) {
        if (partitionSchema.isEmpty()) {
            return;
        }
        planned = new Planned(partitionFilters, select(partitionFilters));
    }

    private List<Selected> select(scala.collection.immutable.Seq<Expression> partitionFilters) {
        Planned cached = planned;
        if (cached != null && partitionFilters.equals(cached.filters())) {
            return cached.selected();
        }
        List<Filter> translated = new ArrayList<>();
        for (Expression e : Scala.list(partitionFilters)) {
            scala.Option<Filter> f = DataSourceStrategy$.MODULE$.translateFilter(e, true);
            if (f.isDefined()) {
                translated.add(f.get());
            }
        }
        return lister.list(translated.toArray(new Filter[0]));
    }

    @Override
    public PartitionSpec partitionSpec() {
        if (partitionSchema.isEmpty()) {
            return new PartitionSpec(partitionSchema, Scala.seq(List.of()));
        }
        return index(lister.list(new Filter[0])).partitionSpec();
    }

    @Override
    public StructType partitionSchema() {
        return partitionSchema;
    }

    @Override
    public scala.collection.mutable.LinkedHashMap<Path, FileStatus> leafFiles() {
        return all().leafFiles();
    }

    @Override
    public scala.collection.immutable.Map<Path, FileStatus[]> leafDirToChildrenFiles() {
        return all().leafDirToChildrenFiles();
    }

    private InMemoryFileIndex all() {
        return partitionSchema.isEmpty() ? unpartitioned() : index(lister.list(new Filter[0]));
    }

    @Override
    public scala.collection.immutable.Seq<Path> rootPaths() {
        Planned cached = planned;
        if (cached == null) {
            return Scala.seq(List.of(root));
        }
        List<Selected> selected = cached.selected();
        List<Path> out = new ArrayList<>(selected.size());
        for (Selected s : selected) {
            out.add(qualify(conf, s.location()));
        }
        return Scala.seq(out);
    }

    @Override
    public String[] inputFiles() {
        return all().inputFiles();
    }

    @Override
    public void refresh() {
        // Nothing cached: every listing asks the catalog.
    }

    @Override
    public long sizeInBytes() {
        // Spark's default would list every file of the table; an unknown size keeps joins from broadcasting it.
        return spark.sessionState().conf().defaultSizeInBytes();
    }

    @Override
    public String toString() {
        return "GlueFileIndex(" + root + (lastSelected >= 0 ? ", " + lastSelected + " partitions selected" : "") + ")";
    }

}
