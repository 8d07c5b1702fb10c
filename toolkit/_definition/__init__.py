"""A tool's definition: `@tool`, its signature, docstring, input and output schemas, and its content conversion."""
