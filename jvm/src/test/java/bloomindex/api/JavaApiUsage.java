package bloomindex.api;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * The Scala API called from Java: this file compiling is half the test (overloads instead of
 * default arguments, varargs, java.util.Map options); ScalaApiSuite runs it.
 */
public final class JavaApiUsage {
  private JavaApiUsage() {}

  /** Creates {@code name} on the parquet files under {@code path}, refreshes it, and returns DESCRIBE's rows. */
  public static Map<String, String> createRefreshDescribe(SparkSession spark, String name, String path) {
    Map<String, String> idOptions = new LinkedHashMap<>();
    idOptions.put("fpp", "0.001");
    BloomIndex bi = BloomIndex.forSession(spark);
    boolean created = bi.create(name)
        .onPath("parquet", path)
        .column("id", idOptions)
        .columns("s")
        .option("sizing", "exact")
        .ndv(1000L)
        .globalFilter()
        .execute();
    if (!created) {
      throw new IllegalStateException("not created");
    }
    if (bi.create(name).onPath("parquet", path).columns("id").ifNotExists().execute()) {
      throw new IllegalStateException("IF NOT EXISTS created it again");
    }
    bi.refresh(name);
    bi.refresh(name, true);
    return bi.describe(name).asJava();
  }

  public static Dataset<Row> list(SparkSession spark) {
    return BloomIndex.forSession(spark).list();
  }

  public static boolean drop(SparkSession spark, String name) {
    return BloomIndex.forSession(spark).drop(name, true);
  }
}
