package io.gluecat.spark.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Predicate$;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata;
import org.apache.spark.sql.execution.datasources.DataSourceStrategy$;
import org.apache.spark.sql.execution.datasources.InMemoryFileIndex;
import org.apache.spark.sql.execution.datasources.NoopCache$;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.execution.datasources.PartitionPath;
import org.apache.spark.sql.execution.datasources.PartitionSpec;
import org.apache.spark.sql.execution.datasources.PartitioningAwareFileIndex;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.internal.SQLConf$;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The files of a Glue table, chosen by the catalog: Spark's partition filters go to gluecat as source
 * filters, and only the folders of the partitions it returns are listed (through Spark's own
 * InMemoryFileIndex, which also applies the full partition predicate to them). A governed table's files
 * are exactly its objects, as the catalog answers them with their sizes: nothing is listed, and the full
 * partition predicate is applied here.
 */
public final class GlueFileIndex extends PartitioningAwareFileIndex {
    /** One partition the catalog selected: its typed values and its folder; for a governed table, its files
     * (null: list the folder). */
    public record Selected(InternalRow values, String location, List<FileStatus> files) {
        public Selected(InternalRow values, String location) {
            this(values, location, null);
        }
    }

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
    /** Whether the lister answers each partition's files (a governed table's objects). */
    private final boolean exact;
    private volatile int lastSelected = -1;
    /** The selection made at planning time for these partition filters, reused by the listing. */
    private record Planned(scala.collection.immutable.Seq<Expression> filters, List<Selected> selected) {}

    private volatile Planned planned;

    public GlueFileIndex(SparkSession spark, String location, StructType partitionSchema, Lister lister,
            Map<String, String> options) {
        this(spark, location, partitionSchema, lister, options, false);
    }

    public GlueFileIndex(SparkSession spark, String location, StructType partitionSchema, Lister lister,
            Map<String, String> options, boolean exact) {
        super(spark, Scala.map(options), scala.Option.empty(), NoopCache$.MODULE$);
        this.exact = exact;
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
        if (exact) {
            List<Selected> selected = select(partitionFilters);
            lastSelected = selected.size();
            return directories(selected, partitionFilters);
        }
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
        if (partitionSchema.isEmpty() && !exact) {
            return;
        }
        planned = new Planned(partitionFilters, select(partitionFilters));
    }

    private List<Selected> select(scala.collection.immutable.Seq<Expression> partitionFilters) {
        Planned cached = planned;
        if (cached != null && partitionFilters.equals(cached.filters())) {
            return cached.selected();
        }
        return lister.list(translate(partitionFilters));
    }

    /**
     * Spark's partition predicates as source filters, with dates and timestamps as java.time values. A
     * java.sql.Date (what the filters carry otherwise) is in the hybrid Julian calendar, which has no days
     * 1582-10-05 to 1582-10-14: such a date came back as another day and the catalog selected the wrong
     * partitions.
     */
    private static Filter[] translate(scala.collection.immutable.Seq<Expression> partitionFilters) {
        SQLConf conf = SQLConf.get().clone();
        conf.setConfString(SQLConf.DATETIME_JAVA8API_ENABLED().key(), "true");
        return SQLConf$.MODULE$.withExistingConf(conf, () -> {
            List<Filter> translated = new ArrayList<>();
            for (Expression e : Scala.list(partitionFilters)) {
                scala.Option<Filter> f = DataSourceStrategy$.MODULE$.translateFilter(e, true);
                if (f.isDefined()) {
                    translated.add(f.get());
                }
            }
            return translated.toArray(new Filter[0]);
        });
    }

    /** A governed table's selected partitions with their files, those the whole partition predicate keeps. */
    private scala.collection.immutable.Seq<PartitionDirectory> directories(List<Selected> selected,
            scala.collection.immutable.Seq<Expression> partitionFilters) {
        BasePredicate keep = predicate(partitionFilters);
        List<PartitionDirectory> out = new ArrayList<>();
        for (Selected s : selected) {
            if (s.files().isEmpty() || (keep != null && !keep.eval(s.values()))) {
                continue;
            }
            List<FileStatusWithMetadata> files = new ArrayList<>(s.files().size());
            for (FileStatus f : s.files()) {
                files.add(new FileStatusWithMetadata(f, Scala.map(Map.of())));
            }
            out.add(new PartitionDirectory(s.values(), Scala.seq(files)));
        }
        return Scala.seq(out);
    }

    /** The partition filters as one predicate over a partition's values; null when there are none. */
    private BasePredicate predicate(scala.collection.immutable.Seq<Expression> partitionFilters) {
        List<Expression> filters = Scala.list(partitionFilters);
        if (filters.isEmpty() || partitionSchema.isEmpty()) {
            return null;
        }
        Expression all = filters.get(0);
        List<Attribute> referenced = new ArrayList<>();
        for (Expression f : filters) {
            referenced.addAll(Scala.list(f.references().toSeq()));
        }
        for (Expression f : filters.subList(1, filters.size())) {
            all = new And(all, f);
        }
        // The values row's attributes: those the filters name (bound by their ids), the others unused.
        List<Attribute> input = new ArrayList<>();
        for (StructField field : partitionSchema.fields()) {
            Attribute found = DataTypeUtils.toAttribute(field);
            for (Attribute a : referenced) {
                if (a.name().equalsIgnoreCase(field.name())) {
                    found = a;
                }
            }
            input.add(found);
        }
        BasePredicate p = Predicate$.MODULE$.create(all, Scala.seq(input));
        p.initialize(0);
        return p;
    }

    private List<FileStatus> allObjects() {
        List<FileStatus> out = new ArrayList<>();
        for (Selected s : lister.list(new Filter[0])) {
            out.addAll(s.files());
        }
        return out;
    }

    @Override
    public PartitionSpec partitionSpec() {
        if (exact) {
            return new PartitionSpec(partitionSchema, Scala.seq(List.of()));  // partitions are not folders here
        }
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
        if (exact) {
            scala.collection.mutable.LinkedHashMap<Path, FileStatus> out = new scala.collection.mutable.LinkedHashMap<>();
            for (FileStatus f : allObjects()) {
                out.put(f.getPath(), f);
            }
            return out;
        }
        return all().leafFiles();
    }

    @Override
    public scala.collection.immutable.Map<Path, FileStatus[]> leafDirToChildrenFiles() {
        if (exact) {
            Map<Path, List<FileStatus>> byFolder = new java.util.LinkedHashMap<>();
            for (FileStatus f : allObjects()) {
                byFolder.computeIfAbsent(f.getPath().getParent(), k -> new ArrayList<>()).add(f);
            }
            Map<Path, FileStatus[]> out = new java.util.LinkedHashMap<>();
            byFolder.forEach((k, v) -> out.put(k, v.toArray(new FileStatus[0])));
            return Scala.map(out);
        }
        return all().leafDirToChildrenFiles();
    }

    @Override
    public scala.collection.immutable.Seq<FileStatus> allFiles() {
        return exact ? Scala.seq(allObjects()) : super.allFiles();
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
            if (exact) {
                s.files().forEach(f -> out.add(f.getPath()));  // EXPLAIN's Location: the files read
            } else {
                out.add(qualify(conf, s.location()));
            }
        }
        return Scala.seq(out);
    }

    @Override
    public String[] inputFiles() {
        if (exact) {
            return allObjects().stream().map(f -> f.getPath().toString()).toArray(String[]::new);
        }
        return all().inputFiles();
    }

    @Override
    public void refresh() {
        // Nothing cached: every listing asks the catalog.
    }

    @Override
    public long sizeInBytes() {
        Planned cached = planned;
        if (exact && cached != null) {
            long size = 0;
            for (Selected s : cached.selected()) {
                for (FileStatus f : s.files()) {
                    size += f.getLen();
                }
            }
            return size;  // the objects' sizes, as the catalog keeps them
        }
        // Spark's default would list every file of the table; an unknown size keeps joins from broadcasting it.
        return spark.sessionState().conf().defaultSizeInBytes();
    }

    @Override
    public String toString() {
        return "GlueFileIndex(" + root + (exact ? ", objects" : "") + (lastSelected >= 0 ? ", " + lastSelected + " partitions selected" : "") + ")";
    }

}
