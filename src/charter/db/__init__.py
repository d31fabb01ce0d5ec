"""The SQL core: connections, the embedded default server, migrations."""
