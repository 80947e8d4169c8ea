"""OpenAI Chat Completions and compatible servers (vLLM, llama.cpp, Ollama) behind the port.

`provider` holds the client, its errors and the model list; `request` builds the body (one
system message: the frozen base, then the dynamic contributions, so the frozen bytes are a
byte-identical prefix of every request and the server's prefix cache can hit); `stream` turns
the chunks real servers send into Peri's stream events and the final message.
"""
