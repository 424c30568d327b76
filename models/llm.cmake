# The zoo's language model (models/llm.py): a LLaMA-style decoder from
# Hugging Face transformers, random weights, exported by the torch.export-
# based exporter, with its reference case. Included at the end of
# models/CMakeLists.txt.
set(llm_files ${ONYX_ZOO_DIR}/llama.onnx ${ONYX_ZOO_DIR}/cases/llama.json)
add_custom_command(
  OUTPUT ${llm_files}
  COMMAND ${ONYX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/llm.py ${ONYX_ZOO_DIR}
  COMMAND ${ONYX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/ort_check.py ${ONYX_ZOO_DIR}/llama.onnx
  DEPENDS llm.py make_references.py zoo_common.py ort_check.py
  COMMENT "Exporting the zoo's LLaMA-style language model (torch.export-based exporter)"
  VERBATIM)
onyx_zoo_add_cases(CASES llama FILES ${llm_files} CLI_MODELS llama)
