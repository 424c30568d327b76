# int8 models in the model zoo (models/quantized.py): ResNet-50 and the ViT
# of the zoo quantized by ONNX Runtime's quantize_dynamic, so the integer
# kernels (ConvInteger, MatMulInteger, DynamicQuantizeLinear) run real
# models against ONNX Runtime's outputs. Included at the end of
# models/CMakeLists.txt, after the torchvision exports it quantizes.
set(quantized_files ${ONYX_ZOO_DIR}/resnet50_int8.onnx ${ONYX_ZOO_DIR}/vit_tiny_int8.onnx
  ${ONYX_ZOO_DIR}/cases/resnet50_int8.json ${ONYX_ZOO_DIR}/cases/vit_tiny_int8.json)
add_custom_command(
  OUTPUT ${quantized_files}
  COMMAND ${ONYX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/quantized.py ${ONYX_ZOO_DIR}
  DEPENDS quantized.py make_references.py ${ONYX_ZOO_DIR}/resnet50.onnx ${ONYX_ZOO_DIR}/vit_tiny.onnx
  COMMENT "Quantizing zoo models with ONNX Runtime (int8)"
  VERBATIM)
# only the manifest depends on these files, so the command runs in
# zoo_references, after zoo has exported the models it reads
onyx_zoo_add_cases(CASES resnet50_int8 vit_tiny_int8 FILES ${quantized_files})
