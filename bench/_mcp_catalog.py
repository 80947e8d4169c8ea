"""A stdio MCP server for the benchmarks: one catalog of realistic tool schemas (modelled on common
GitHub, filesystem and Postgres servers: 16 + 12 + 12 = 40 tools), in raw JSON-RPC so it starts in
milliseconds. `--delay S` waits S seconds before answering `initialize` (a slow server).

    python bench/_mcp_catalog.py github [--delay 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

S, INT, B = "string", "integer", "boolean"
REPO = [("owner", S, "Repository owner (user or organization)", True),
        ("repo", S, "Repository name", True)]  # fmt: skip
PAGE = [("page", INT, "Page number for pagination (min 1)", False),
        ("perPage", INT, "Results per page for pagination (min 1, max 100)", False)]  # fmt: skip

Param = tuple[str, str, str, bool]
CATALOGS: dict[str, list[tuple[str, str, list[Param]]]] = {
    "github": [
        (
            "create_issue",
            "Create a new issue in a GitHub repository.",
            [
                *REPO,
                ("title", S, "Issue title", True),
                ("body", S, "Issue body content", False),
                ("assignees", "array", "Usernames to assign to this issue", False),
                ("labels", "array", "Labels to apply to this issue", False),
            ],
        ),
        (
            "list_issues",
            "List issues in a GitHub repository, with filtering options.",
            [
                *REPO,
                ("state", S, "Filter by state: open, closed or all", False),
                ("labels", "array", "Filter by labels", False),
                ("sort", S, "Sort by created, updated or comments", False),
                ("since", S, "Only issues updated after this ISO 8601 timestamp", False),
                *PAGE,
            ],
        ),
        (
            "get_issue",
            "Get the details of a specific issue in a GitHub repository.",
            [*REPO, ("issue_number", INT, "The number of the issue", True)],
        ),
        (
            "update_issue",
            "Update an existing issue in a GitHub repository.",
            [
                *REPO,
                ("issue_number", INT, "Issue number to update", True),
                ("title", S, "New title", False),
                ("body", S, "New description", False),
                ("state", S, "New state: open or closed", False),
                ("labels", "array", "New labels", False),
            ],
        ),
        (
            "add_issue_comment",
            "Add a comment to a specific issue in a GitHub repository.",
            [
                *REPO,
                ("issue_number", INT, "Issue number to comment on", True),
                ("body", S, "Comment content", True),
            ],
        ),
        (
            "search_issues",
            "Search for issues and pull requests across GitHub repositories "
            "using GitHub's issue search syntax.",
            [
                ("q", S, "Search query using GitHub issues search syntax", True),
                ("sort", S, "Sort field by number of matches of categories", False),
                ("order", S, "Sort order: asc or desc", False),
                *PAGE,
            ],
        ),
        (
            "create_pull_request",
            "Create a new pull request in a GitHub repository.",
            [
                *REPO,
                ("title", S, "PR title", True),
                ("body", S, "PR description", False),
                ("head", S, "Branch containing the changes", True),
                ("base", S, "Branch to merge into", True),
                ("draft", B, "Create as a draft PR", False),
            ],
        ),
        (
            "list_pull_requests",
            "List and filter pull requests in a repository.",
            [
                *REPO,
                ("state", S, "Filter by state: open, closed or all", False),
                ("head", S, "Filter by head user or organization and branch", False),
                ("base", S, "Filter by base branch", False),
                *PAGE,
            ],
        ),
        (
            "get_pull_request",
            "Get the details of a specific pull request.",
            [*REPO, ("pullNumber", INT, "Pull request number", True)],
        ),
        (
            "merge_pull_request",
            "Merge a pull request.",
            [
                *REPO,
                ("pullNumber", INT, "Pull request number", True),
                ("commit_title", S, "Title for the merge commit", False),
                ("merge_method", S, "Merge method: merge, squash or rebase", False),
            ],
        ),
        (
            "get_file_contents",
            "Get the contents of a file or directory from a GitHub repository.",
            [
                *REPO,
                ("path", S, "Path to the file or directory", True),
                ("branch", S, "Branch to get contents from", False),
            ],
        ),
        (
            "create_or_update_file",
            "Create or update a single file in a GitHub repository.",
            [
                *REPO,
                ("path", S, "Path where to create or update the file", True),
                ("content", S, "Content of the file", True),
                ("message", S, "Commit message", True),
                ("branch", S, "Branch to use", True),
                ("sha", S, "SHA of the file being replaced (required when updating)", False),
            ],
        ),
        (
            "search_code",
            "Search for code across GitHub repositories.",
            [
                ("q", S, "Search query using GitHub code search syntax", True),
                ("sort", S, "Sort field ('indexed' only)", False),
                *PAGE,
            ],
        ),
        (
            "list_commits",
            "Get the list of commits of a branch in a GitHub repository.",
            [*REPO, ("sha", S, "Branch name or commit SHA", False), *PAGE],
        ),
        (
            "create_branch",
            "Create a new branch in a GitHub repository.",
            [
                *REPO,
                ("branch", S, "Name for the new branch", True),
                ("from_branch", S, "Source branch (defaults to the repository's default)", False),
            ],
        ),
        (
            "fork_repository",
            "Fork a GitHub repository to your account or an organization.",
            [*REPO, ("organization", S, "Organization to fork to", False)],
        ),
    ],
    "filesystem": [
        (
            "read_text_file",
            "Read the complete contents of a file from the file system as "
            "text. Handles various text encodings and provides detailed error messages if "
            "the file cannot be read. Only works within allowed directories.",
            [
                ("path", S, "Path of the file", True),
                ("head", INT, "If provided, returns only the first N lines of the file", False),
                ("tail", INT, "If provided, returns only the last N lines of the file", False),
            ],
        ),
        (
            "read_multiple_files",
            "Read the contents of multiple files simultaneously. More "
            "efficient than reading files one by one. Failed reads for individual files won't "
            "stop the entire operation.",
            [("paths", "array", "Paths of the files", True)],
        ),
        (
            "write_file",
            "Create a new file or completely overwrite an existing file with new "
            "content. Use with caution as it will overwrite existing files without warning.",
            [("path", S, "Path of the file", True), ("content", S, "New content", True)],
        ),
        (
            "edit_file",
            "Make line-based edits to a text file. Each edit replaces exact line "
            "sequences with new content. Returns a git-style diff showing the changes made.",
            [
                ("path", S, "Path of the file", True),
                ("edits", "array", "Edits: objects with oldText and newText", True),
                ("dryRun", B, "Preview changes using git-style diff format", False),
            ],
        ),
        (
            "create_directory",
            "Create a new directory or ensure a directory exists. Can create "
            "multiple nested directories in one operation.",
            [("path", S, "Directory", True)],
        ),
        (
            "list_directory",
            "Get a detailed listing of all files and directories in a specified "
            "path. Results distinguish files and directories with [FILE] and [DIR] prefixes.",
            [("path", S, "Directory to list", True)],
        ),
        (
            "list_directory_with_sizes",
            "Get a detailed listing of all files and directories in "
            "a specified path, including sizes.",
            [
                ("path", S, "Directory to list", True),
                ("sortBy", S, "Sort entries by name or size", False),
            ],
        ),
        (
            "directory_tree",
            "Get a recursive tree view of files and directories as a JSON "
            "structure. Each entry includes name, type and children for directories.",
            [("path", S, "Root of the tree", True)],
        ),
        (
            "move_file",
            "Move or rename files and directories. Fails if the destination exists.",
            [("source", S, "Source path", True), ("destination", S, "Destination path", True)],
        ),
        (
            "search_files",
            "Recursively search for files and directories matching a pattern. "
            "Case-insensitive, matches partial names.",
            [
                ("path", S, "Where to start", True),
                ("pattern", S, "Pattern to match", True),
                ("excludePatterns", "array", "Patterns to exclude", False),
            ],
        ),
        (
            "get_file_info",
            "Retrieve detailed metadata about a file or directory: size, "
            "creation time, last modified time, permissions and type.",
            [("path", S, "Path of the file or directory", True)],
        ),
        (
            "list_allowed_directories",
            "Returns the list of directories this server is allowed to access.",
            [],
        ),
    ],
    "postgres": [
        (
            "query",
            "Run a read-only SQL query against the database and return the rows.",
            [("sql", S, "The SQL query to run (read-only)", True)],
        ),
        (
            "execute_sql",
            "Execute any SQL statement, including writes, in a transaction.",
            [
                ("sql", S, "The SQL statement", True),
                ("params", "array", "Positional parameters for the statement", False),
            ],
        ),
        ("list_schemas", "List all schemas in the database, with their owners and kinds.", []),
        (
            "list_tables",
            "List the tables of a schema with row estimates and sizes.",
            [("schema", S, "Schema name (default: public)", False)],
        ),
        (
            "describe_table",
            "Describe a table: columns, types, defaults, constraints, indexes.",
            [("schema", S, "Schema name", False), ("table", S, "Table name", True)],
        ),
        (
            "explain_query",
            "Explain the execution plan of a SQL query, optionally with "
            "ANALYZE and hypothetical indexes.",
            [
                ("sql", S, "The query to explain", True),
                ("analyze", B, "Run the query to collect real timings", False),
                ("hypothetical_indexes", "array", "Indexes to simulate", False),
            ],
        ),
        (
            "list_indexes",
            "List the indexes of a table with their definitions and usage.",
            [("schema", S, "Schema name", False), ("table", S, "Table name", True)],
        ),
        (
            "get_table_stats",
            "Get statistics for a table: live and dead tuples, last vacuum "
            "and analyze times, sequential and index scans.",
            [("table", S, "Table", True)],
        ),
        ("list_extensions", "List installed and available database extensions.", []),
        (
            "analyze_workload",
            "Analyze the database workload and recommend indexes.",
            [("max_index_size_mb", INT, "Size budget for recommended indexes", False)],
        ),
        (
            "get_top_queries",
            "Report the slowest queries from pg_stat_statements.",
            [
                ("sort_by", S, "total_time, mean_time or calls", False),
                ("limit", INT, "How many queries to return", False),
            ],
        ),
        ("list_connections", "List current connections with their state and query.", []),
    ],
}


def schema(params: list[Param]) -> dict[str, Any]:
    props: dict[str, Any] = {}
    for name, kind, description, _required in params:
        prop: dict[str, Any] = {"type": kind, "description": description}
        if kind == "array":
            prop["items"] = {"type": "string"}
        props[name] = prop
    return {
        "type": "object",
        "properties": props,
        "required": [name for name, _k, _d, required in params if required],
    }


def tools(catalog: str) -> list[dict[str, Any]]:
    return [
        {"name": name, "description": description, "inputSchema": schema(params)}
        for name, description, params in CATALOGS[catalog]
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("catalog", choices=sorted(CATALOGS))
    ap.add_argument("--delay", type=float, default=0.0)
    args = ap.parse_args()

    def send(obj: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            time.sleep(args.delay)
            version = msg.get("params", {}).get("protocolVersion", "2025-06-18")
            info = {"name": args.catalog, "version": "0"}
            result = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
            send({"jsonrpc": "2.0", "id": mid, "result": result})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": tools(args.catalog)}})
        elif method == "tools/call":
            text = f"{msg['params']['name']} ran"
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "result": {"content": [{"type": "text", "text": text}]},
                }
            )
        elif mid is not None:
            send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no method"}})


if __name__ == "__main__":
    main()
