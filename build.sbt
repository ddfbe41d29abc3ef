// bloomindex: the JVM part (Scala 2.13, Java for the SIMD kernels).
//
// Spark is a `provided` dependency resolved from Maven, as for any Spark library: the version is
// the one tests/spark_versions/spark-4.2.txt pins for the PySpark that `make test` runs on (one
// pin for both sides), or BLOOMINDEX_SPARK_VERSION. The one jar runs on every Spark of the
// supported range (bloomindex.compat.SparkShim); `make test-spark-versions` compiles the sources
// against the other versions too, with BLOOMINDEX_BUILD_DIR set so that the main build's classes
// are left alone.

// The Maven group id (not a registry's host name; see docs/decisions.md, issue 18).
ThisBuild / organization := "io.github.bloomindex"
// The version is written once, in python/bloomindex/_version.py: the wheel and these artifacts agree.
ThisBuild / version := {
  val file = (ThisBuild / baseDirectory).value / "python" / "bloomindex" / "_version.py"
  val Version = """(?m)^__version__ = "([^"]+)"$""".r
  Version.findFirstMatchIn(IO.read(file)).map(_.group(1)).getOrElse(sys.error(s"no __version__ in $file"))
}

// The Spark version: BLOOMINDEX_SPARK_VERSION, else the PySpark pin of the build's Spark line.
def sparkVersionOf(base: File): String = sys.env.get("BLOOMINDEX_SPARK_VERSION").getOrElse {
  val pin = base / "tests" / "spark_versions" / "spark-4.2.txt"
  val Pinned = """(?m)^pyspark==(\S+)$""".r
  Pinned.findFirstMatchIn(IO.read(pin)).map(_.group(1)).getOrElse(sys.error(s"no pyspark==<version> in $pin"))
}

// Spark 4.2's Scala; Spark 4.1 ships 2.13.17, and Scala 2.13 keeps binary compatibility within the
// line, so the jar runs on either (tests/spark_versions runs it on each).
val scala213 = "2.13.18"
val zeroAllocationHashingVersion = "0.27ea1"
val scalatestVersion = "3.2.19"
// Apache Iceberg: compile-only (Provided), never staged with the jar. Iceberg publishes Spark
// runtimes per Spark line (1.12.0: up to Spark 4.1); the classes used here (Table, FileScanTask,
// SparkTable, ...) are the same in each, and are loaded only when a query meets an Iceberg table.
val icebergVersion = "1.12.0"
val icebergCompileRuntime = "iceberg-spark-runtime-4.1_2.13"

lazy val sparkVersion = settingKey[String]("The Spark version we compile against")

// A compile check against a PySpark's own jars (make test-spark-versions: the folder `jars` of
// the venv's pyspark), the very classes the smoke tests then run on, where that release's
// artifacts are not all at hand on Maven Central; Spark is then not resolved from Maven.
val sparkJarsDir: Option[File] = sys.env.get("BLOOMINDEX_SPARK_JARS").filter(_.nonEmpty).map(file)

lazy val root = (project in file("."))
  .settings(
    name := "bloomindex",
    sparkVersion := sparkVersionOf(baseDirectory.value),
    scalaVersion := scala213,
    // Scala's library is Spark's: `provided`, so that a --packages resolution never puts a second
    // scala-library on the class path.
    autoScalaLibrary := false,
    // A compile check against another Spark's jars builds into a folder of its own.
    target := sys.env.get("BLOOMINDEX_BUILD_DIR").map(file).getOrElse(baseDirectory.value / "target"),
    Compile / scalaSource := baseDirectory.value / "jvm" / "src" / "main" / "scala",
    Compile / javaSource := baseDirectory.value / "jvm" / "src" / "main" / "java",
    // What differs between Spark lines at compile time (bloomindex.compat.RuntimeFilteringForwarders):
    // scala-spark-4.1 for a compile check against Spark 4.1, scala-spark-4.2 for 4.2 and newer.
    Compile / unmanagedSourceDirectories += baseDirectory.value / "jvm" / "src" / "main" / {
      val Line = """^(\d+)\.(\d+)""".r.unanchored
      sparkVersion.value match {
        case Line(major, minor) if major.toInt < 4 || (major.toInt == 4 && minor.toInt < 2) => "scala-spark-4.1"
        case Line(_, _) => "scala-spark-4.2"
        case v => sys.error(s"cannot read the Spark version '$v' (BLOOMINDEX_SPARK_VERSION or the pin): expected <major>.<minor>...")
      }
    },
    Compile / resourceDirectory := baseDirectory.value / "jvm" / "src" / "main" / "resources",
    Test / resourceDirectory := baseDirectory.value / "jvm" / "src" / "test" / "resources",
    Test / scalaSource := baseDirectory.value / "jvm" / "src" / "test" / "scala",
    Test / javaSource := baseDirectory.value / "jvm" / "src" / "test" / "java",
    libraryDependencies ++= Seq(
      "org.scala-lang" % "scala-library" % scalaVersion.value % Provided,
      "org.scala-lang" % "scala-reflect" % scalaVersion.value % Provided,
      "net.openhft" % "zero-allocation-hashing" % zeroAllocationHashingVersion,
      ("org.apache.iceberg" % icebergCompileRuntime % icebergVersion % Provided).intransitive(),
      "org.scalatest" %% "scalatest" % scalatestVersion % Test
    ) ++ (if (sparkJarsDir.isEmpty) Seq("org.apache.spark" %% "spark-sql" % sparkVersion.value % Provided) else Nil),
    Compile / unmanagedJars ++= sparkJarsDir.toSeq.flatMap(d => (d * "*.jar").classpath),
    // Iceberg registers a data source (ServiceLoader): kept off the Scala tests' class path, which
    // runs on the build's Spark (Iceberg is tested on Spark 4.1 by `make test-iceberg`).
    Test / dependencyClasspath ~= (_.filterNot(_.data.getName.startsWith("iceberg-"))),
    javacOptions ++= Seq("--add-modules", "jdk.incubator.vector"),
    Compile / doc / javacOptions := Seq("--add-modules", "jdk.incubator.vector"),
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked"),
    Test / fork := true,
    Test / javaOptions ++= Seq(
      "--add-modules", "jdk.incubator.vector",
      "-Xmx2g",
      // The serial collector: on 2 cores G1's concurrent threads cost more than they save on a
      // 2 GB heap (docs/decisions.md, "CI time, again").
      "-XX:+UseSerialGC",
      // The warm-up's per-file part over 256 made-up files, not 65,536: seconds of CPU at each
      // session's start for the JIT's sake at a million files (WarmupSuite tests it directly).
      "-Dbloomindex.warmup.files=256",
      // Spark on JDK 17 needs these opens (same list as spark-submit's defaults).
      "--add-opens=java.base/java.lang=ALL-UNNAMED",
      "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
      "--add-opens=java.base/java.nio=ALL-UNNAMED",
      "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
      "--add-opens=java.base/java.util=ALL-UNNAMED",
      "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED"
    ),
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    // The jar holds our classes only; zero-allocation-hashing is copied beside it.
    Compile / packageBin / artifactPath := target.value / "bloomindex.jar",
    // Benchmarks live with the tests so they can compare against parquet-java.
    Test / run / fork := true,
    // `sbt publish` (make dist): the jar, its sources, its API docs and a pom with what a Maven
    // Central release requires, in a Maven repository layout under dist/maven, for
    // spark.jars.packages / --packages with --repositories (tests/test_dist.py checks the pom).
    description := "Bloom filter indexes for Apache Spark",
    homepage := Some(url("https://github.com/bloomindex/bloomindex")),
    licenses := Seq("Apache-2.0" -> url("https://www.apache.org/licenses/LICENSE-2.0")),
    scmInfo := Some(ScmInfo(url("https://github.com/bloomindex/bloomindex"),
      "scm:git:https://github.com/bloomindex/bloomindex.git")),
    developers := List(Developer("bloomindex", "The bloomindex developers", "",
      url("https://github.com/bloomindex"))),
    publishMavenStyle := true,
    versionScheme := Some("early-semver"),
    publishTo := Some(Resolver.file("dist", baseDirectory.value / "dist" / "maven")),
    publishConfiguration := publishConfiguration.value.withOverwrite(true),
    Compile / doc / scalacOptions ++= Seq("-no-link-warnings"),
    Test / publishArtifact := false,
    pomIncludeRepository := (_ => false)
  )

// `sbt stageJars`: the jar and the runtime dependencies Spark lacks, into the Python package.
lazy val stageJars = taskKey[Seq[File]]("Copy bloomindex.jar and its runtime jars into python/bloomindex/jars")

stageJars := {
  val dest = baseDirectory.value / "python" / "bloomindex" / "jars"
  IO.delete(dest)
  IO.createDirectory(dest)
  val ours = (Compile / packageBin).value
  val deps = (Compile / dependencyClasspath).value.files
    .filter(_.getName.startsWith("zero-allocation-hashing"))
  val copied = (ours +: deps).map { f =>
    val to = dest / (if (f == ours) "bloomindex.jar" else f.getName)
    IO.copyFile(f, to)
    to
  }
  streams.value.log.info(s"staged ${copied.map(_.getName).mkString(", ")} in $dest")
  copied
}

// `sbt stageTestJar`: the test classes (the tests' in-memory KMS among them) as one jar, which the
// Python tests put on the driver's class path (tests/conftest.py). Never shipped in the package.
lazy val stageTestJar = taskKey[File]("Copy the test classes jar to target/bloomindex-tests.jar")

stageTestJar := {
  val to = target.value / "bloomindex-tests.jar"
  IO.copyFile((Test / packageBin).value, to)
  streams.value.log.info(s"staged $to")
  to
}
