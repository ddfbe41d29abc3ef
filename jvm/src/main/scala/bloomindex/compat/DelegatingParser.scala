package bloomindex.compat

import java.lang.reflect.{InvocationHandler, InvocationTargetException, Method, Proxy}
import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.sql.catalyst.parser.ParserInterface

/**
 * A parser extension as Spark's `ParserInterface` on every supported version: the methods that
 * `ours` declares (same name and parameter types) answer from `ours`, every other method of the
 * interface is the delegate's (the parser Spark passed to the extension).
 *
 * Why not a class implementing `ParserInterface`: the interface gains methods between versions
 * (Spark 4.3 added the abstract `splitStatements`, which the spark-sql CLI calls, and
 * `parseTemporalTableIdentifier`), and a class compiled against 4.2 lacks them: an
 * `AbstractMethodError` on 4.3. A proxy built at run time implements the running Spark's
 * interface whatever it holds, and hands what we do not parse to Spark, as the extension means to.
 */
object DelegatingParser {

  def apply(ours: AnyRef, delegate: ParserInterface): ParserInterface = {
    val handler = new Handler(ours, delegate)
    Proxy.newProxyInstance(classOf[ParserInterface].getClassLoader, Array[Class[_]](classOf[ParserInterface]), handler)
      .asInstanceOf[ParserInterface]
  }

  private final class Handler(ours: AnyRef, delegate: ParserInterface) extends InvocationHandler {
    // interface method -> ours's method of the same signature, or None: the delegate's.
    private val routes = new ConcurrentHashMap[Method, Option[Method]]()

    private def route(m: Method): Option[Method] = routes.computeIfAbsent(m, _ =>
      try {
        val own = ours.getClass.getMethod(m.getName, m.getParameterTypes: _*)
        if (own.getDeclaringClass == classOf[Object]) None else Some(own)
      } catch { case _: NoSuchMethodException => None })

    override def invoke(proxy: AnyRef, m: Method, args: Array[AnyRef]): AnyRef = m.getName match {
      case "toString" if m.getParameterCount == 0 => s"${ours.getClass.getSimpleName}($delegate)"
      case "hashCode" if m.getParameterCount == 0 => Int.box(System.identityHashCode(proxy))
      case "equals" if m.getParameterCount == 1 => Boolean.box(proxy eq args(0))
      case _ =>
        try route(m) match {
          case Some(own) => own.invoke(ours, args: _*)
          case None => m.invoke(delegate, args: _*)
        } catch { case e: InvocationTargetException => throw e.getCause }
    }
  }
}
