package bloomindex.compat

import java.io.{ObjectInputStream, ObjectOutputStream}

import org.apache.hadoop.conf.Configuration
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession

/** A Hadoop configuration shipped to tasks (Configuration is Writable, not Serializable). */
private[bloomindex] final class ConfWritable(@transient var conf: Configuration) extends Serializable {
  private def writeObject(out: ObjectOutputStream): Unit = {
    out.defaultWriteObject()
    conf.write(out)
  }

  private def readObject(in: ObjectInputStream): Unit = {
    in.defaultReadObject()
    conf = new Configuration(false)
    conf.readFields(in)
  }
}

private[bloomindex] object ConfWritable {
  /** The session's Hadoop configuration, broadcast to the build's tasks. */
  def broadcast(spark: SparkSession): Broadcast[ConfWritable] =
    spark.sparkContext.broadcast(new ConfWritable(spark.sessionState.newHadoopConf()))
}
