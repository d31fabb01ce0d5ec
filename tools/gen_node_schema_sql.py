"""Write src/charter/db/sql/functions/0594_node_config_schemas.sql from the node type
declarations in charter.compiler.node_schemas (the compiled-configuration JSON Schemas that
PostgreSQL checks at publish). Run after changing a node type's settings."""

from charter.compiler.node_schemas import SQL_FILE, sql

if __name__ == "__main__":
    SQL_FILE.write_text(sql())
    print(f"wrote {SQL_FILE}")
