package bloomindex.testing

import java.nio.charset.StandardCharsets
import java.nio.file.{Files, Paths, StandardOpenOption}

import com.esotericsoftware.kryo.Kryo
import com.esotericsoftware.minlog.Log
import org.apache.spark.serializer.KryoRegistrator

/**
 * For `make test-kryo`: Kryo told to warn of each class it writes without a registration (once per
 * Kryo instance; it then writes it by name), and the warnings appended to the file named by
 * `BLOOMINDEX_KRYO_LOG` with where it was written, so that tests/conftest.py can fail the run on
 * one of bloomindex's classes that `bloomindex.BloomIndexKryoRegistrator` left out. (Spark's own
 * classes that bloomindex's jobs send are caught by the cluster tests, which require registration,
 * on the paths they run.)
 */
class KryoUnregistered extends KryoRegistrator {
  override def registerClasses(kryo: Kryo): Unit = {
    kryo.setWarnUnregisteredClasses(true)
    val file = sys.env.get("BLOOMINDEX_KRYO_LOG")
    file.foreach { f =>
      Log.setLogger(new Log.Logger {
        override def log(level: Int, category: String, message: String, ex: Throwable): Unit =
          if (message != null && message.contains("not registered")) this.synchronized {
            val where = new Throwable().getStackTrace.iterator.map(_.toString)
              .filter(s => s.contains("bloomindex") || s.contains("spark")).take(6).mkString(" <- ")
            Files.write(Paths.get(f), (message.replace('\n', ' ') + " @@ " + where + "\n").getBytes(StandardCharsets.UTF_8),
              StandardOpenOption.CREATE, StandardOpenOption.APPEND)
          }
      })
      Log.WARN()
    }
  }
}
