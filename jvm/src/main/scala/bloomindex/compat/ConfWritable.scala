package bloomindex.compat

import java.io.{DataInputStream, DataOutputStream, ObjectInputStream, ObjectOutputStream}

import com.esotericsoftware.kryo.{Kryo, KryoSerializable}
import com.esotericsoftware.kryo.io.{Input, Output}
import org.apache.hadoop.conf.Configuration
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession

/**
 * A Hadoop configuration shipped to tasks (Configuration is Writable, not Serializable), by Java
 * serialization or by Kryo (`spark.serializer`: Kryo skips `writeObject` and `@transient`
 * fields, and would ship no configuration at all).
 */
private[bloomindex] final class ConfWritable(@transient var conf: Configuration) extends Serializable with KryoSerializable {
  private def writeObject(out: ObjectOutputStream): Unit = {
    out.defaultWriteObject()
    conf.write(out)
  }

  private def readObject(in: ObjectInputStream): Unit = {
    in.defaultReadObject()
    conf = new Configuration(false)
    conf.readFields(in)
  }

  def write(kryo: Kryo, out: Output): Unit = {
    val data = new DataOutputStream(out)
    conf.write(data)
    data.flush()
  }

  def read(kryo: Kryo, in: Input): Unit = {
    conf = new Configuration(false)
    conf.readFields(new DataInputStream(in))
  }
}

private[bloomindex] object ConfWritable {
  /** The session's Hadoop configuration, broadcast to the build's tasks. */
  def broadcast(spark: SparkSession): Broadcast[ConfWritable] =
    spark.sparkContext.broadcast(new ConfWritable(spark.sessionState.newHadoopConf()))
}
