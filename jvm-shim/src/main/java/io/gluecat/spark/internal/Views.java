package io.gluecat.spark.internal;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression;
import org.apache.spark.sql.catalyst.plans.QueryPlan;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.execution.CommandExecutionMode$;
import org.apache.spark.sql.execution.command.ViewHelper;

/** Spark's own checks of a persistent view's query, which its v2 view path leaves to the catalog. */
public final class Views {
    private Views() {}

    /**
     * Refuses a view whose query reads a temporary view, variable or function, as Spark's built-in catalog
     * does (INVALID_TEMP_OBJ_REFERENCE): stored, the query would not find them in another session, or would
     * read a table of the same name. The query is analyzed as the statement's own session sees it.
     */
    public static void refuseTemporaryReferences(List<String> name, String queryText) {
        SparkSession spark = SparkSession.active();
        LogicalPlan parsed;
        try {
            parsed = spark.sessionState().sqlParser().parsePlan(queryText);
        } catch (org.apache.spark.sql.catalyst.parser.ParseException e) {
            throw new IllegalArgumentException("gluecat: the view's query does not parse: " + e.getMessage(), e);
        }
        Set<String> functions = new LinkedHashSet<>();
        temporaryFunctions(parsed, spark.sessionState().catalog(), functions);
        LogicalPlan analyzed = spark.sessionState().executePlan(parsed, CommandExecutionMode$.MODULE$.SKIP()).analyzed();
        ViewHelper.verifyTemporaryObjectsNotExists(false, Scala.seq(name), analyzed,
            Scala.seq(new ArrayList<>(functions)));
    }

    /** The temporary functions a parsed plan calls, in its subqueries and CTEs too. */
    private static void temporaryFunctions(QueryPlan<?> plan, SessionCatalog catalog, Set<String> out) {
        for (Expression e : Scala.list(plan.expressions())) {
            temporaryFunctions(e, catalog, out);
        }
        for (Object child : Scala.list(plan.children())) {
            temporaryFunctions((QueryPlan<?>) child, catalog, out);
        }
        for (Object inner : Scala.list(plan.innerChildren())) {
            if (inner instanceof QueryPlan<?> p) {
                temporaryFunctions(p, catalog, out);
            }
        }
    }

    private static void temporaryFunctions(Expression e, SessionCatalog catalog, Set<String> out) {
        if (e instanceof UnresolvedFunction f && f.nameParts().size() == 1) {
            String fn = f.nameParts().head();
            if (catalog.isTemporaryFunction(new FunctionIdentifier(fn))) {
                out.add(fn);
            }
        }
        if (e instanceof SubqueryExpression s) {
            temporaryFunctions(s.plan(), catalog, out);
        }
        for (Expression child : Scala.list(e.children())) {
            temporaryFunctions(child, catalog, out);
        }
    }
}
