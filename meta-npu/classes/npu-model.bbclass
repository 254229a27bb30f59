# SPDX-License-Identifier: MIT
# npu-model.bbclass: a recipe that installs models for the acceptance suite lists them, with the
# input each takes, in NPU_MODELS: "PATH=INPUT[,INPUT...]" words, PATH on the board, INPUT
# "dtype:d0xd1x...". The build checks that every PATH is installed and that a .tflite file takes
# the declared inputs (schema.fbs of TensorFlow Lite: Model.subgraphs[0].inputs -> Tensor.shape and
# type), so the list the image facts carry, and the profiles are held against, is the files' own.
# .rknn and .cvimodel files have no documented layout the build could read: their inputs stay
# declared only.

NPU_MODELS ?= ""

# TensorType values of TensorFlow Lite's schema.fbs.
def npu_tflite_type_name(code):
    names = {0: 'float32', 1: 'float16', 2: 'int32', 3: 'uint8', 4: 'int64', 6: 'bool',
             7: 'int16', 9: 'int8', 10: 'float64', 15: 'uint32', 16: 'uint16'}
    return names.get(code, 'type%d' % code)

def npu_tflite_inputs(data):
    """The first subgraph's inputs of a .tflite as ["dtype:d0xd1...", ...]; ValueError if unreadable."""
    import struct

    def scalar(fmt, pos):
        try:
            return struct.unpack_from(fmt, data, pos)[0]
        except struct.error:
            raise ValueError('the file ends at byte %d inside the flatbuffer' % len(data))

    def field(table, index):
        vtable = table - scalar('<i', table)
        if index * 2 + 4 >= scalar('<H', vtable):
            return None
        offset = scalar('<H', vtable + 4 + index * 2)
        return table + offset if offset else None

    def target(pos):
        return pos + scalar('<I', pos)

    def vector(table, index):
        pos = field(table, index)
        if pos is None:
            return []
        start = target(pos)
        return [start + 4 + 4 * i for i in range(scalar('<I', start))]

    if len(data) < 8 or data[4:8] != b'TFL3':
        raise ValueError('it has no TFLite file identifier "TFL3" at byte 4')
    model = target(0)
    subgraphs = vector(model, 2)
    if not subgraphs:
        raise ValueError('it has no subgraph')
    graph = target(subgraphs[0])
    tensors = [target(p) for p in vector(graph, 0)]
    inputs = []
    for pos in vector(graph, 1):
        index = scalar('<i', pos)
        if not 0 <= index < len(tensors):
            raise ValueError('input %d names tensor %d of %d' % (len(inputs), index, len(tensors)))
        tensor = tensors[index]
        shape = [scalar('<i', p) for p in vector(tensor, 0)]
        kind = field(tensor, 1)
        code = scalar('<b', kind) if kind is not None else 0
        inputs.append('%s:%s' % (npu_tflite_type_name(code), 'x'.join(str(s) for s in shape)))
    return inputs

python npu_check_models() {
    import os
    image = d.getVar('D')
    for word in (d.getVar('NPU_MODELS') or '').split():
        path, _, inputs = word.partition('=')
        installed = image + path
        if not os.path.isfile(installed):
            bb.fatal('NPU_MODELS names %s but do_install did not install it: install it or correct '
                     'NPU_MODELS.' % path)
        declared = inputs.split(',') if inputs else []
        if not path.endswith('.tflite') or not declared:
            continue
        with open(installed, 'rb') as model:
            data = model.read()
        try:
            found = npu_tflite_inputs(data)
        except ValueError as error:
            bb.fatal('%s is not a readable TFLite model: %s.' % (path, error))
        if found != declared:
            bb.fatal('%s takes %s but NPU_MODELS declares %s: correct NPU_MODELS or ship the model '
                     'the recipe means.' % (path, ','.join(found), ','.join(declared)))
}
do_install[postfuncs] += "npu_check_models"
do_install[vardeps] += "NPU_MODELS"
