# Low-precision models in the model zoo (models/low_precision.py):
# ResNet-50 and the ViT of the zoo quantized to int8 by ONNX Runtime's
# quantize_dynamic, and ResNet-50 converted to float16 by its float16
# converter, so
# the integer kernels (ConvInteger, MatMulInteger, DynamicQuantizeLinear)
# and the float16 promotion run real models against ONNX Runtime's
# outputs. Included at the end of models/CMakeLists.txt, after the
# torchvision exports it converts.
set(low_precision_cases resnet50_int8 vit_tiny_int8 resnet50_fp16)
set(low_precision_files "")
foreach(c ${low_precision_cases})
  list(APPEND low_precision_files ${ONYX_ZOO_DIR}/${c}.onnx ${ONYX_ZOO_DIR}/cases/${c}.json)
endforeach()
# only the manifest depends on these files, so the command runs in
# zoo_references, after zoo has exported the models it reads
add_custom_command(
  OUTPUT ${low_precision_files}
  COMMAND ${ONYX_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/low_precision.py ${ONYX_ZOO_DIR}
  DEPENDS low_precision.py make_references.py ${ONYX_ZOO_DIR}/resnet50.onnx
    ${ONYX_ZOO_DIR}/vit_tiny.onnx
  COMMENT "Making the zoo's int8 and float16 models with ONNX Runtime's tools"
  VERBATIM)
onyx_zoo_add_cases(CASES ${low_precision_cases} FILES ${low_precision_files})
