package io.gluecat.spark;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.parser.ParameterContext;
import org.apache.spark.sql.catalyst.parser.ParseException;
import org.apache.spark.sql.catalyst.parser.ParserInterface;
import org.apache.spark.sql.catalyst.parser.SqlStatementSplitResult;
import org.apache.spark.sql.catalyst.parser.TemporalIdentifier;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

/**
 * Spark's parser, except that {@code TBLPROPERTIES ('table_type' = 'GOVERNED')} is taken: Spark reserves the
 * {@code table_type} property and refuses the statement while parsing it, before any catalog sees it. Only a
 * statement Spark refused for exactly that is parsed again, with the key renamed {@code gluecat.table_type},
 * which the catalog reads as the table's type (and which other catalogs keep as an ordinary property).
 */
final class GlueParser implements ParserInterface {
    static final String RENAMED = "gluecat.table_type";
    private static final Pattern KEY = Pattern.compile("(?i)(['\"`]?)\\btable_type\\b\\1(?=\\s*(=|'|\"))");
    private final ParserInterface delegate;

    GlueParser(ParserInterface delegate) {
        this.delegate = delegate;
    }

    private static boolean refusedTableType(ParseException e) {
        return "UNSUPPORTED_FEATURE.SET_TABLE_PROPERTY".equals(e.getCondition())
            && String.valueOf(e.getMessage()).contains("table_type");
    }

    static String renamed(String sql) {
        Matcher m = KEY.matcher(sql);
        return m.replaceAll(r -> Matcher.quoteReplacement(r.group(1) + RENAMED + r.group(1)));
    }

    @Override
    public LogicalPlan parsePlan(String sql) throws ParseException {
        try {
            return delegate.parsePlan(sql);
        } catch (ParseException e) {
            if (!refusedTableType(e)) {
                throw e;
            }
            return delegate.parsePlan(renamed(sql));
        }
    }

    @Override
    public LogicalPlan parsePlanWithParameters(String sql, ParameterContext parameters) throws ParseException {
        try {
            return delegate.parsePlanWithParameters(sql, parameters);
        } catch (ParseException e) {
            if (!refusedTableType(e)) {
                throw e;
            }
            return delegate.parsePlanWithParameters(renamed(sql), parameters);
        }
    }

    @Override
    public Expression parseExpression(String sqlText) throws ParseException {
        return delegate.parseExpression(sqlText);
    }

    @Override
    public TableIdentifier parseTableIdentifier(String sqlText) throws ParseException {
        return delegate.parseTableIdentifier(sqlText);
    }

    @Override
    public FunctionIdentifier parseFunctionIdentifier(String sqlText) throws ParseException {
        return delegate.parseFunctionIdentifier(sqlText);
    }

    @Override
    public scala.collection.immutable.Seq<String> parseMultipartIdentifier(String sqlText) throws ParseException {
        return delegate.parseMultipartIdentifier(sqlText);
    }

    @Override
    public TemporalIdentifier parseTemporalTableIdentifier(String sqlText) throws ParseException {
        return delegate.parseTemporalTableIdentifier(sqlText);
    }

    @Override
    public LogicalPlan parseQuery(String sqlText) throws ParseException {
        return delegate.parseQuery(sqlText);
    }

    @Override
    public StructType parseRoutineParam(String sqlText) throws ParseException {
        return delegate.parseRoutineParam(sqlText);
    }

    @Override
    public SqlStatementSplitResult splitStatements(String sqlText) {
        return delegate.splitStatements(sqlText);
    }

    @Override
    public StructType parseTableSchema(String sqlText) throws ParseException {
        return delegate.parseTableSchema(sqlText);
    }

    @Override
    public DataType parseDataType(String sqlText) throws ParseException {
        return delegate.parseDataType(sqlText);
    }
}
