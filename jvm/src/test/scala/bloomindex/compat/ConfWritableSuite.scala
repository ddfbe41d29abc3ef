package bloomindex.compat

import org.apache.hadoop.conf.Configuration
import org.apache.spark.SparkConf
import org.apache.spark.serializer.{JavaSerializer, KryoSerializer, Serializer}
import org.scalatest.funsuite.AnyFunSuite

/** The Hadoop configuration shipped to tasks arrives whole whatever `spark.serializer` is. */
class ConfWritableSuite extends AnyFunSuite {

  private def roundTrip(serializer: Serializer): Configuration = {
    val conf = new Configuration(false)
    conf.set("fs.s3a.endpoint", "http://127.0.0.1:9000")
    conf.set("bloomindex.test.key", "é and 𝄞")
    val s = serializer.newInstance()
    s.deserialize[ConfWritable](s.serialize(new ConfWritable(conf))).conf
  }

  test("by Java serialization and by Kryo (which skips writeObject and transient fields): the same settings") {
    // Before: under Kryo the configuration arrived as null, and every task reading with it failed.
    Seq(new JavaSerializer(new SparkConf()), new KryoSerializer(new SparkConf())).foreach { serializer =>
      val conf = roundTrip(serializer)
      assert(conf != null, serializer)
      assert(conf.get("fs.s3a.endpoint") == "http://127.0.0.1:9000", serializer)
      assert(conf.get("bloomindex.test.key") == "é and 𝄞", serializer)
    }
  }
}
