package io.gluecat.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.analysis.NoSuchPartitionsException;
import org.apache.spark.sql.catalyst.analysis.PartitionSpec;
import org.apache.spark.sql.catalyst.analysis.ResolvedTable;
import org.apache.spark.sql.catalyst.analysis.UnresolvedPartitionSpec;
import org.apache.spark.sql.catalyst.analysis.UnresolvedProcedure;
import org.apache.spark.sql.catalyst.analysis.UnresolvedTable;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.plans.logical.AddPartitions;
import org.apache.spark.sql.catalyst.plans.logical.AnalyzeColumn;
import org.apache.spark.sql.catalyst.plans.logical.AnalyzeTable;
import org.apache.spark.sql.catalyst.plans.logical.Call;
import org.apache.spark.sql.catalyst.plans.logical.DropPartitions;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.RecoverPartitions;
import org.apache.spark.sql.catalyst.plans.logical.RepairTable;
import org.apache.spark.sql.catalyst.plans.logical.SetTableLocation;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.types.DataTypes;
import io.gluecat.spark.internal.Scala;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions=io.gluecat.spark.GlueExtensions}: the statements Spark refuses for v2 tables during
 * planning (MSCK REPAIR TABLE, ALTER TABLE RECOVER PARTITIONS, ANALYZE TABLE, ALTER TABLE PARTITION ... SET LOCATION)
 * become calls of gluecat's procedures when they name a gluecat table; DROP PARTITION with a partial spec drops every
 * partition it matches, as Hive does; ADD and DROP PARTITION report partitions by their values as written;
 * {@code TBLPROPERTIES ('table_type' = 'GOVERNED')}, which Spark's parser refuses, is taken (GlueParser). Other
 * catalogs' statements pass untouched.
 */
public final class GlueExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
    @Override
    public BoxedUnit apply(SparkSessionExtensions extensions) {
        // Partial specs are refused while the table resolves, so they are expanded before resolution.
        extensions.injectHintResolutionRule(session -> new ExpandPartialSpecs(session));
        extensions.injectResolutionRule(session -> new GlueCommands());
        extensions.injectParser((session, delegate) -> new GlueParser(delegate));
        return BoxedUnit.UNIT;
    }

    private static Literal string(String value) {
        return Literal.create(value, DataTypes.StringType);
    }

    private static Literal bool(boolean value) {
        return Literal.create(value, DataTypes.BooleanType);
    }

    private static String qualified(Identifier ident) {
        return String.join(".", ident.namespace()) + "." + ident.name();
    }

    private static LogicalPlan call(GlueCatalog catalog, String procedure, Expression... args) {
        UnresolvedProcedure proc = new UnresolvedProcedure(Scala.seq(List.of(catalog.name(), "system", procedure)));
        return new Call(proc, Scala.seq(Arrays.asList(args)), true);
    }

    /** Rewrites, after the table resolved, the statements that reach a gluecat table. */
    static final class GlueCommands extends Rule<LogicalPlan> {
        @Override
        public LogicalPlan apply(LogicalPlan plan) {
            if (plan instanceof RepairTable r && glue(r.child()) != null) {
                ResolvedTable t = (ResolvedTable) r.child();
                return call(glue(t), "repair_table", string(qualified(t.identifier())), bool(r.enableAddPartitions()),
                    bool(r.enableDropPartitions()));
            }
            if (plan instanceof RecoverPartitions r && glue(r.child()) != null) {
                ResolvedTable t = (ResolvedTable) r.child();
                return call(glue(t), "repair_table", string(qualified(t.identifier())), bool(true), bool(false));
            }
            if (plan instanceof AnalyzeTable a && glue(a.child()) != null) {
                ResolvedTable t = (ResolvedTable) a.child();
                if (!a.partitionSpec().isEmpty()) {
                    throw new IllegalArgumentException("gluecat: ANALYZE TABLE ... PARTITION is not supported: Glue keeps"
                        + " statistics per table; analyze " + t.identifier() + " whole");
                }
                return call(glue(t), "analyze_table", string(qualified(t.identifier())), bool(a.noScan()), string(""),
                    bool(false));
            }
            if (plan instanceof AnalyzeColumn a && glue(a.child()) != null) {
                ResolvedTable t = (ResolvedTable) a.child();
                String columns = a.columnNames().isDefined() ? String.join(",", Scala.list(a.columnNames().get())) : "";
                return call(glue(t), "analyze_table", string(qualified(t.identifier())), bool(false), string(columns),
                    bool(a.allColumns()));
            }
            if (plan instanceof SetTableLocation s && s.partitionSpec().isDefined() && glue(s.child()) != null) {
                ResolvedTable t = (ResolvedTable) s.child();
                Map<String, String> spec = Scala.javaMap(s.partitionSpec().get());
                String json = Backend.JSON.valueToTree(new LinkedHashMap<>(spec)).toString();
                return call(glue(t), "set_partition_location", string(qualified(t.identifier())), string(json),
                    string(s.location()));
            }
            if (plan instanceof AddPartitions a && !a.ifNotExists() && checked(a.table(), GlueTable.Checks.ADD) != null) {
                return a.copy(checked(a.table(), GlueTable.Checks.ADD), a.parts(), false);
            }
            if (plan instanceof DropPartitions d && !d.ifExists() && checked(d.table(), GlueTable.Checks.DROP) != null) {
                return d.copy(checked(d.table(), GlueTable.Checks.DROP), d.parts(), false, d.purge());
            }
            return plan;
        }

        private static GlueCatalog glue(LogicalPlan table) {
            return table instanceof ResolvedTable t && t.catalog() instanceof GlueCatalog g ? g : null;
        }

        /** The resolved table, its GlueTable reporting missing or existing partitions itself (by their values as
         * written: Spark's own check prints a date as days since the epoch); null if not a gluecat table or done. */
        private static LogicalPlan checked(LogicalPlan table, GlueTable.Checks checks) {
            if (table instanceof ResolvedTable t && t.table() instanceof GlueTable g && g.checks() != checks) {
                return t.copy(t.catalog(), t.identifier(), g.checking(checks), t.outputAttributes());
            }
            return null;
        }
    }

    /** DROP PARTITION with a spec naming only some partition columns drops every partition it matches (Hive's
     * behaviour; Spark's v2 path requires a full spec). */
    static final class ExpandPartialSpecs extends Rule<LogicalPlan> {
        private final SparkSession session;
        private LogicalPlan seen;

        ExpandPartialSpecs(SparkSession session) {
            this.session = session;
        }

        @Override
        public LogicalPlan apply(LogicalPlan plan) {
            if (plan == seen || !(plan instanceof DropPartitions d) || !(d.table() instanceof UnresolvedTable u)) {
                return plan;
            }
            Optional<Target> target = target(session.sessionState().catalogManager(), Scala.list(u.multipartIdentifier()));
            if (target.isEmpty()) {
                return plan;
            }
            GlueTable table;
            try {
                table = (GlueTable) target.get().catalog().loadTable(target.get().ident());
            } catch (Exception e) {
                return plan;  // Spark's own resolution reports a missing table
            }
            int keys = table.partitionSchema().size();
            List<PartitionSpec> out = new ArrayList<>();
            Set<Map<String, String>> added = new LinkedHashSet<>();
            boolean expanded = false;
            for (PartitionSpec spec : Scala.list(d.parts())) {
                if (!(spec instanceof UnresolvedPartitionSpec p) || p.spec().size() >= keys || p.location().isDefined()
                        || Scala.javaMap(p.spec()).keySet().stream().anyMatch(k -> table.partitionIndex(k) < 0)) {
                    out.add(spec);  // a full spec, or one Spark reports as wrong itself
                    continue;
                }
                expanded = true;
                Map<String, String> partial = Scala.javaMap(p.spec());
                List<Map<String, String>> matching = table.matching(partial);
                if (matching.isEmpty() && !d.ifExists()) {
                    throw Backend.<RuntimeException>unchecked(new NoSuchPartitionsException("PARTITIONS_NOT_FOUND",
                        Scala.map(Map.of("partitionList", GlueTable.partitionList(List.of(partial)),
                            "tableName", target.get().catalog().quoted(target.get().ident())))));
                }
                for (Map<String, String> full : matching) {
                    if (added.add(full)) {
                        out.add(new UnresolvedPartitionSpec(Scala.map(full), scala.Option.empty()));
                    }
                }
            }
            if (!expanded) {
                seen = plan;
                return plan;
            }
            seen = d.copy(d.table(), Scala.seq(out), d.ifExists(), d.purge());
            return seen;
        }
    }

    record Target(GlueCatalog catalog, Identifier ident) {}

    /** The gluecat catalog and table a multi-part name names, resolved as Spark resolves it. */
    static Optional<Target> target(CatalogManager manager, List<String> parts) {
        CatalogPlugin catalog;
        List<String> rest;
        if (parts.size() > 1 && manager.isCatalogRegistered(parts.get(0))) {
            catalog = manager.catalog(parts.get(0));
            rest = parts.subList(1, parts.size());
        } else {
            catalog = manager.currentCatalog();
            rest = parts;
            if (parts.size() == 1) {
                rest = new ArrayList<>(Arrays.asList(manager.currentNamespace()));
                rest.add(parts.get(0));
            }
        }
        if (!(catalog instanceof GlueCatalog g) || rest.size() < 2) {
            return Optional.empty();
        }
        return Optional.of(new Target(g, Identifier.of(rest.subList(0, rest.size() - 1).toArray(new String[0]),
            rest.get(rest.size() - 1))));
    }
}
