"""Sluice as the code sandbox of the frameworks people use for code mode, each as small as the
framework allows: FastMCP's CodeMode (`fastmcp_provider`), LangChain (`langchain_tool`),
Pydantic AI (`pydantic_ai_toolset`) and smolagents (`smolagents_executor`). Each module
imports its framework, which is not a dependency of the client: install the one you use."""
