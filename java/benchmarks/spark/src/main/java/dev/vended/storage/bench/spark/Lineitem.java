package dev.vended.storage.bench.spark;

import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * TPC-H {@code lineitem}-shaped rows (the 16 columns and their types; values from hashes of the
 * row number, not dbgen's distributions), sorted by {@code l_orderkey} (4 lines per order), and
 * the three queries.
 */
final class Lineitem {

    private Lineitem() {}

    private static final String WORDS = "'furiously','carefully','quickly','blithely','slyly','ideas',"
            + "'deposits','packages','requests','accounts','instructions','theodolites','pinto','beans',"
            + "'foxes','dependencies','platelets','asymptotes','regular','final','special','express',"
            + "'pending','ironic','bold','even','silent','unusual','daring','fluffily','above','along',"
            + "'across','against','among','around','sleep','wake','nag','haggle','cajole','boost',"
            + "'detect','integrate','maintain','use','print','affix'";

    /** {@code rows} rows in {@code files} partitions (one Parquet file each). */
    static Dataset<Row> generate(SparkSession spark, long rows, int files) {
        return generate(spark, 0, rows, files);
    }

    /** As {@link #generate(SparkSession, long, int)}, for row numbers from {@code first}. */
    static Dataset<Row> generate(SparkSession spark, long first, long rows, int files) {
        return spark.range(first, first + rows, 1, files).selectExpr(
                "id DIV 4 AS l_orderkey",
                "pmod(xxhash64(id, 1), 2000000) AS l_partkey",
                "pmod(xxhash64(id, 2), 100000) AS l_suppkey",
                "CAST(id % 4 + 1 AS INT) AS l_linenumber",
                "CAST(pmod(xxhash64(id, 3), 50) + 1 AS DECIMAL(15,2)) AS l_quantity",
                "CAST((pmod(xxhash64(id, 3), 50) + 1) * (900 + pmod(xxhash64(id, 4), 100000) / 100.0)"
                        + " AS DECIMAL(15,2)) AS l_extendedprice",
                "CAST(pmod(xxhash64(id, 5), 11) / 100.0 AS DECIMAL(15,2)) AS l_discount",
                "CAST(pmod(xxhash64(id, 6), 9) / 100.0 AS DECIMAL(15,2)) AS l_tax",
                "element_at(array('A','N','R'), CAST(pmod(xxhash64(id, 7), 3) + 1 AS INT)) AS l_returnflag",
                "element_at(array('O','F'), CAST(pmod(xxhash64(id, 8), 2) + 1 AS INT)) AS l_linestatus",
                "date_add(DATE'1992-01-02', CAST(pmod(xxhash64(id, 9), 2526) AS INT)) AS l_shipdate",
                "date_add(DATE'1992-01-02', CAST(pmod(xxhash64(id, 9), 2526) + pmod(xxhash64(id, 10), 90) - 30 AS INT)) AS l_commitdate",
                "date_add(DATE'1992-01-02', CAST(pmod(xxhash64(id, 9), 2526) + pmod(xxhash64(id, 11), 30) + 1 AS INT)) AS l_receiptdate",
                "element_at(array('DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'),"
                        + " CAST(pmod(xxhash64(id, 12), 4) + 1 AS INT)) AS l_shipinstruct",
                "element_at(array('REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'),"
                        + " CAST(pmod(xxhash64(id, 13), 7) + 1 AS INT)) AS l_shipmode",
                "concat_ws(' ', element_at(array(" + WORDS + "), CAST(pmod(xxhash64(id, 14), 48) + 1 AS INT)),"
                        + " element_at(array(" + WORDS + "), CAST(pmod(xxhash64(id, 15), 48) + 1 AS INT)),"
                        + " element_at(array(" + WORDS + "), CAST(pmod(xxhash64(id, 16), 48) + 1 AS INT)),"
                        + " substr(hex(xxhash64(id, 17)), 1, CAST(pmod(xxhash64(id, 18), 12) AS INT))) AS l_comment");
    }

    /**
     * Runs query {@code q} and returns its answer as text (compared across FileSystems).
     *
     * <ul>
     *   <li>{@code scan}: every column read, TPC-H Q1's grouping and sums plus aggregates of the
     *       other columns.
     *   <li>{@code filter}: TPC-H Q6 (4 of 16 columns, about 2% of the rows pass).
     *   <li>{@code lookup}: the 4 lines of one order ({@code l_orderkey = key}), all columns; Parquet
     *       statistics skip every row group but one.
     * </ul>
     */
    static String query(Dataset<Row> t, String q, long key) {
        List<Row> rows = switch (q) {
            case "scan" -> t.where("l_shipdate <= DATE'1998-09-02'")
                    .groupBy("l_returnflag", "l_linestatus")
                    .agg(org.apache.spark.sql.functions.expr("sum(l_quantity)"),
                            org.apache.spark.sql.functions.expr("sum(l_extendedprice * (1 - l_discount) * (1 + l_tax))"),
                            org.apache.spark.sql.functions.expr("count(*)"),
                            org.apache.spark.sql.functions.expr("sum(l_orderkey + l_partkey + l_suppkey + l_linenumber)"),
                            org.apache.spark.sql.functions.expr("max(l_commitdate)"),
                            org.apache.spark.sql.functions.expr("max(l_receiptdate)"),
                            org.apache.spark.sql.functions.expr("sum(length(l_shipinstruct) + length(l_shipmode) + length(l_comment))"))
                    .orderBy("l_returnflag", "l_linestatus").collectAsList();
            case "filter" -> t.where("l_shipdate >= DATE'1994-01-01' AND l_shipdate < DATE'1995-01-01'"
                            + " AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")
                    .selectExpr("sum(l_extendedprice * l_discount)", "count(*)").collectAsList();
            case "lookup" -> t.where("l_orderkey = " + key)
                    .selectExpr("count(*)", "sum(l_linenumber)", "max(l_comment)", "sum(l_extendedprice)",
                            "max(l_shipdate)")
                    .collectAsList();
            default -> throw new IllegalArgumentException("unknown query " + q);
        };
        String s = rows.stream().map(Row::toString).collect(Collectors.joining(";"));
        return s.length() > 60 ? String.format(Locale.ROOT, "%08x", s.hashCode()) : s;
    }
}
