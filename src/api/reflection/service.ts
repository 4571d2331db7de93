import { create, createRegistry, fromBinary, toBinary, type DescFile, type Registry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import * as v1 from "../../../gen/grpc/reflection/v1/reflection_pb.js";
import * as v1alpha from "../../../gen/grpc/reflection/v1alpha/reflection_pb.js";

type Request = v1.ServerReflectionRequest;
type Response = v1.ServerReflectionResponse;

/** A file and everything it imports, dependencies first, each once. */
function withDependencies(file: DescFile): DescFile[] {
  const out: DescFile[] = [];
  const seen = new Set<string>();
  const visit = (f: DescFile) => {
    if (seen.has(f.name)) return;
    seen.add(f.name);
    f.dependencies.forEach(visit);
    out.push(f);
  };
  visit(file);
  return out;
}

const NOT_FOUND = 5;

/** The descriptors reflection serves: files by name, and every type, service and extension by name. */
interface Index {
  files: Map<string, DescFile>;
  registry: Registry;
}

export function indexOf(files: DescFile[]): Index {
  return { files: new Map(files.map((f) => [f.proto.name, f])), registry: createRegistry(...files) };
}

/** Answers one reflection request from the descriptors of every mounted service. */
function answer({ files: byName, registry }: Index, serviceNames: string[], req: Request): Response["messageResponse"] {
  const files = (file: DescFile | undefined) =>
    file
      ? {
          case: "fileDescriptorResponse" as const,
          value: create(v1.FileDescriptorResponseSchema, {
            fileDescriptorProto: withDependencies(file).map((f) => toBinary(FileDescriptorProtoSchema, f.proto)),
          }),
        }
      : undefined;
  const notFound = (what: string) => ({
    case: "errorResponse" as const,
    value: create(v1.ErrorResponseSchema, { errorCode: NOT_FOUND, errorMessage: `${what} not found` }),
  });
  const r = req.messageRequest;
  switch (r.case) {
    case "listServices":
      return {
        case: "listServicesResponse",
        value: create(v1.ListServiceResponseSchema, { service: serviceNames.map((name) => create(v1.ServiceResponseSchema, { name })) }),
      };
    case "fileByFilename":
      return files(byName.get(r.value)) ?? notFound(`file ${r.value}`);
    case "fileContainingSymbol": {
      const symbol = r.value.replace(/^\./, "");
      const lookup = (name: string) => registry.get(name) ?? registry.getService(name);
      // A method, field or enum value: look up its parent.
      const parent = lookup(symbol) ?? lookup(symbol.slice(0, symbol.lastIndexOf(".")));
      const file = parent && "file" in parent ? parent.file : undefined;
      return files(file) ?? notFound(`symbol ${r.value}`);
    }
    case "fileContainingExtension": {
      const extendee = registry.getMessage(r.value.containingType);
      const ext = extendee ? registry.getExtensionFor(extendee, r.value.extensionNumber) : undefined;
      return files(ext?.file) ?? notFound(`extension ${r.value.extensionNumber} of ${r.value.containingType}`);
    }
    case "allExtensionNumbersOfType": {
      const msg = registry.getMessage(r.value);
      if (!msg) return notFound(`type ${r.value}`);
      const numbers: number[] = [];
      for (const t of registry) if (t.kind === "extension" && t.extendee.typeName === msg.typeName) numbers.push(t.number);
      return {
        case: "allExtensionNumbersResponse",
        value: create(v1.ExtensionNumberResponseSchema, { baseTypeName: msg.typeName, extensionNumber: numbers }),
      };
    }
    default:
      return { case: "errorResponse", value: create(v1.ErrorResponseSchema, { errorCode: 3, errorMessage: "empty reflection request" }) };
  }
}

/** gRPC server reflection, v1 and the older v1alpha (same messages, another package), over the same port. */
export function reflectionServices(index: () => Index, serviceNames: () => string[]) {
  const v1Impl: ServiceImpl<typeof v1.ServerReflection> = {
    async *serverReflectionInfo(requests) {
      for await (const req of requests) {
        yield create(v1.ServerReflectionResponseSchema, {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(index(), serviceNames(), req),
        });
      }
    },
  };
  // v1alpha messages have the same fields and numbers: convert through the wire format.
  const v1alphaImpl: ServiceImpl<typeof v1alpha.ServerReflection> = {
    async *serverReflectionInfo(requests) {
      for await (const alphaReq of requests) {
        const req = fromBinary(v1.ServerReflectionRequestSchema, toBinary(v1alpha.ServerReflectionRequestSchema, alphaReq));
        const res = create(v1.ServerReflectionResponseSchema, {
          validHost: req.host,
          originalRequest: req,
          messageResponse: answer(index(), serviceNames(), req),
        });
        yield fromBinary(v1alpha.ServerReflectionResponseSchema, toBinary(v1.ServerReflectionResponseSchema, res));
      }
    },
  };
  return { v1: v1Impl, v1alpha: v1alphaImpl };
}
