package org.apache.spark.sql.bloomindex

import org.apache.spark.sql.types.StructType

/** Spark's own schema helpers that are `private[spark]` (hence this package, as for [[BloomIndexSQLConf]]). */
object Schemas {

  /** `schema` with every field nullable, nested ones too: what Spark's `DataSource` makes of an inferred data schema. */
  def asNullable(schema: StructType): StructType = schema.asNullable
}
